import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SesameCrypto
import COpenSSL

/// A TLS front for a plain HTTP server on 127.0.0.1, for tests of HTTPS clients: it accepts TLS connections on its own
/// port with a certificate chain the test made, and relays the bytes of each one to a new connection to the backend
/// and back, so that the backend (a ``WebhookReceiver``) sees and checks what the client sent.
public final class TLSFront: @unchecked Sendable {
    // `@unchecked Sendable`: the counter is behind `lock`; the rest never changes after `init`.
    public struct Failure: Error {}

    /// The port it listens on.
    public let port: UInt16
    private let listener: Int32
    private let context: OpaquePointer
    private let lock = NSLock()
    private var accepted = 0

    /// - Parameters:
    ///   - backendPort: The plain HTTP server's port on 127.0.0.1.
    ///   - certificate: The server certificate, then any intermediates.
    ///   - key: The certificate's private key.
    public init(backendPort: UInt16, certificate: [Certificate], key: PrivateKey) throws(Failure) {
        // SSL_write to a client that left writes to a closed socket: that must not end the test process.
        _ = signal(SIGPIPE, SIG_IGN)
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw Failure() }
        self.context = context
        let pem = certificate.map(TestMetadataService.pem).joined() + key.pemRepresentation
        let loaded = pem.withCString { text -> Bool in
            guard let bio = BIO_new_mem_buf(text, -1) else { return false }
            defer { BIO_free(bio) }
            guard let leaf = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
            defer { X509_free(leaf) }
            guard SSL_CTX_use_certificate(context, leaf) == 1 else { return false }
            for _ in certificate.dropFirst() {
                guard let intermediate = PEM_read_bio_X509(bio, nil, nil, nil),
                    SSL_CTX_ctrl(context, SSL_CTRL_EXTRA_CHAIN_CERT, 0, UnsafeMutableRawPointer(intermediate)) == 1
                else { return false }
            }
            guard let privateKey = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { return false }
            defer { EVP_PKEY_free(privateKey) }
            return SSL_CTX_use_PrivateKey(context, privateKey) == 1
        }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = loaded && socket >= 0 && withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && listen(socket, 16) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard listening else {
            if socket >= 0 { Glibc.close(socket) }
            SSL_CTX_free(context)
            throw Failure()
        }
        listener = socket
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                lock.withLock { accepted += 1 }
                Thread.detachNewThread { [self] in relay(client, to: backendPort) }
            }
        }
    }

    /// TLS connections accepted so far (handshakes that failed included).
    public var connections: Int { lock.withLock { accepted } }

    /// Stops accepting; relays in progress end with their connections.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    deinit { SSL_CTX_free(context) }

    /// Completes the handshake on `client`, then copies bytes both ways until either side closes.
    private func relay(_ client: Int32, to backendPort: UInt16) {
        defer { Glibc.close(client) }
        guard let ssl = SSL_new(context) else { return }
        defer { SSL_free(ssl) }
        guard SSL_set_fd(ssl, client) == 1, SSL_accept(ssl) == 1 else { return }
        let backend = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard backend >= 0 else { return }
        defer { Glibc.close(backend) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = backendPort.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(backend, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: backend, events: Int16(POLLIN), revents: 0)]
        while true {
            if SSL_pending(ssl) == 0 {
                guard poll(&descriptors, 2, 30_000) > 0 else { return }
            }
            if SSL_pending(ssl) > 0 || descriptors[0].revents != 0 {
                let count = SSL_read(ssl, &buffer, Int32(buffer.count))
                guard count > 0, send(backend, buffer, Int(count), Int32(MSG_NOSIGNAL)) == Int(count) else { return }
            }
            if descriptors[1].revents != 0 {
                let count = recv(backend, &buffer, buffer.count, 0)
                guard count > 0, SSL_write(ssl, buffer, Int32(count)) == Int32(count) else { return }
            }
            descriptors[0].revents = 0
            descriptors[1].revents = 0
        }
    }
}
