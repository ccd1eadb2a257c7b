internal import COpenSSL

/// Process-wide settings of the OpenSSL library.
public enum CryptoLibrary {
    /// Keeps OpenSSL loaded until the process is gone: by default OpenSSL 3 frees its state in an `atexit` handler,
    /// which crashes any thread still using it while the process exits (a webhook being signed during shutdown, for
    /// example). Call it first thing in `main`, before any other OpenSSL use.
    public static func keepLoadedUntilExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
