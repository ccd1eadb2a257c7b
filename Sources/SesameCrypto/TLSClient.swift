internal import COpenSSL
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A TLS client configuration (an OpenSSL `SSL_CTX`): TLS 1.2 or later, the server's certificate chain verified
/// against trusted roots, no renegotiation, no compression.
///
/// `@unchecked Sendable`: the context is fully configured in `init` and only read afterwards (OpenSSL documents an
/// `SSL_CTX` shared by sessions on several threads as safe once it is no longer changed).
public final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// - Parameter trustedRootsFile: A file of PEM root certificates to trust instead of the system's store; `nil`
    ///   for OpenSSL's default locations (on Debian the `ca-certificates` store, or the files named by the
    ///   `SSL_CERT_FILE` and `SSL_CERT_DIR` environment variables).
    /// - Throws: `CryptoError.invalidInput` when the roots cannot be loaded, `.internalFailure` when OpenSSL fails.
    public init(trustedRootsFile: String? = nil) throws(CryptoError) {
        guard let context = copenssl_tls_client_context(trustedRootsFile) else {
            throw .openSSL(trustedRootsFile == nil ? .internalFailure : .invalidInput, "TLS client context")
        }
        pointer = context
    }

    deinit { SSL_CTX_free(pointer) }
}

/// One TLS client session over a connected non-blocking socket that the caller owns and closes.
///
/// The server must present a chain to a trusted root for `host`: a DNS name is matched against the certificate's
/// names (no partial wildcards) and sent as SNI; an IP address literal must appear as an IP address name. Every
/// operation returns at once; ``Step/wantRead`` or ``Step/wantWrite`` asks the caller to wait for the socket (with
/// `poll`) and repeat the same call. Used by one thread at a time.
public final class TLSClientSession {
    /// What an operation did.
    public enum Step: Equatable, Sendable {
        /// Done: the handshake completed, or this many bytes were read or written (always more than zero).
        case done(Int)
        /// Repeat the call once the socket is readable.
        case wantRead
        /// Repeat the call once the socket is writable.
        case wantWrite
        /// The server ended the session (reads only).
        case closed
        /// The handshake failed (certificate, protocol) or the session broke; the connection is unusable.
        case failed
    }

    private let pointer: OpaquePointer

    /// - Parameters:
    ///   - context: The configuration.
    ///   - socket: A connected socket in non-blocking mode; it stays the caller's to close, after this session.
    ///   - host: The name or address literal (IPv6 without brackets) the certificate must be valid for.
    /// - Throws: `CryptoError.internalFailure` when OpenSSL cannot set the session up.
    public init(context: TLSClientContext, socket: Int32, host: String) throws(CryptoError) {
        guard let ssl = SSL_new(context.pointer) else { throw .openSSL(.internalFailure, "SSL_new") }
        pointer = ssl
        let configured: Bool
        if Self.isAddressLiteral(host) {
            configured = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
        } else {
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            configured = SSL_set1_host(ssl, host) == 1 && copenssl_ssl_set_server_name(ssl, host) == 1
        }
        guard configured, SSL_set_fd(ssl, socket) == 1 else { throw .openSSL(.internalFailure, "TLS session setup") }
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(pointer) }

    /// Advances the handshake, which verifies the server's certificate; a server that ends the session before the
    /// handshake completes fails it.
    public func handshake() -> Step {
        let result = step { SSL_do_handshake(pointer) }
        return result == .closed ? .failed : result
    }

    /// Reads decrypted bytes into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Step {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .failed }
        return step { SSL_read(pointer, base, Int32(clamping: buffer.count)) }
    }

    /// Encrypts and writes (a prefix of) `bytes`; repeat with the rest, or with the same bytes after a `want`.
    public func write(_ bytes: UnsafeRawBufferPointer) -> Step {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .failed }
        return step { SSL_write(pointer, base, Int32(clamping: bytes.count)) }
    }

    /// Sends close_notify without waiting for the server's, before the caller closes the socket.
    public func close() {
        ERR_clear_error()
        _ = SSL_shutdown(pointer)
        ERR_clear_error()
    }

    /// Runs one OpenSSL I/O call and classifies its result; the thread's error queue is left empty.
    private func step(_ call: () -> Int32) -> Step {
        ERR_clear_error()
        let result = call()
        if result > 0 { return .done(Int(result)) }
        let error = SSL_get_error(pointer, result)
        ERR_clear_error()
        switch error {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: return .failed
        }
    }

    /// Whether `host` is an IPv4 or IPv6 address literal rather than a name.
    private static func isAddressLiteral(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }
}
