extension Bool {
    /// Returns the value itself, so that `passkey.isSupported()` compiles and answers ``AuthsignalPasskey/isSupported``.
    ///
    /// authsignal-ios 2.13.0 declares `isSupported()` as a method; the seed document, and this SDK, use a property
    /// `isSupported`. Swift refuses a property and a method of the same name on one type ("invalid redeclaration"),
    /// so the property stays and the call syntax is kept this way: `passkey.isSupported()` reads the property, then
    /// calls the `Bool` it got. Code written against the real SDK compiles unchanged, with a deprecation warning
    /// that points at the property form. It applies to every `Bool`, which is why it does nothing but return `self`.
    @available(*, deprecated, message: "isSupported is a property in Sesame's SDK; drop the ()")
    public func callAsFunction() -> Bool { self }
}
