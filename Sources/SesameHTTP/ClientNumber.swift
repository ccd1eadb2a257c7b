/// A number a client sent (a JSON number in a body or a query), held as sent until a checked conversion takes it out.
///
/// Swift traps on `Int(1e300)`, on overflow and on a failed force unwrap, and a trap ends the whole server process:
/// no `catch` can stop it. So a number from a request never meets a trapping operation: faces decode every client
/// number as a `ClientNumber` and take it out only through ``integer(in:)`` or ``seconds(in:)``, which answer `nil`
/// for anything that is not a whole number inside the range (the face turns that into its own 400). Arithmetic on the
/// value happens only after that, on a number the range has bounded. `Tests/SesameServerTests/TrapPatternTests.swift`
/// keeps conversions that could trap out of the faces, the domain and the HTTP layer.
public struct ClientNumber: Decodable, Sendable, Equatable, CustomStringConvertible {
    /// The number as decoded; any JSON number the decoder can hold (a 39-digit integer becomes a large `Double`).
    public let value: Double

    /// Wraps a number.
    public init(_ value: Double) {
        self.value = value
    }

    /// Decodes any JSON number; other JSON types are a type mismatch.
    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Double.self)
    }

    /// The number as an `Int` when it is whole and within `range`, else `nil`.
    /// - Parameter range: The values the caller accepts; by default any `Int`, leaving the rule to the domain.
    /// - Returns: The whole number, or `nil` for a fraction, a value outside `range`, an infinity or NaN.
    public func integer(in range: ClosedRange<Int> = Int.min...Int.max) -> Int? {
        // `Int(exactly:)` answers nil (never traps) for fractions and for values beyond Int's range.
        guard let whole = Int(exactly: value), range.contains(whole) else { return nil }
        return whole
    }

    /// The number as whole seconds within `range`, else `nil`.
    /// - Parameter range: The seconds the caller accepts; by default any `Int`, leaving the rule to the domain.
    /// - Returns: The seconds as a time interval, or `nil` as ``integer(in:)`` would.
    public func seconds(in range: ClosedRange<Int> = Int.min...Int.max) -> Double? {
        integer(in: range).map(Double.init)
    }

    /// The number as text the way JSON writes it: whole numbers without a fraction (`5`, not `5.0`).
    public var description: String {
        if let whole = Int(exactly: value) { return String(whole) }
        return String(value)
    }
}
