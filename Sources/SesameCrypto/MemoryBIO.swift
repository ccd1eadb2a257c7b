internal import COpenSSL

/// Owns one memory `BIO *`, used for PEM input and output.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// A read-only BIO over a copy of `text`'s UTF-8 bytes (the copy lives as long as the BIO).
    init(reading text: String) throws(CryptoError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Int(Int32.max) else { throw CryptoError(.invalidInput, "PEM text too large") }
        // BIO_new_mem_buf does not copy, so write into a fresh memory BIO instead.
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL(.internalFailure, "BIO_new") }
        pointer = bio
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
            guard written == Int32(bytes.count) else { throw .openSSL(.internalFailure, "BIO_write") }
        }
    }

    /// An empty writable memory BIO.
    init() {
        guard let bio = BIO_new(BIO_s_mem()) else { preconditionFailure("BIO_new failed: \(OpenSSLErrors.drain())") }
        pointer = bio
    }

    deinit { BIO_free(pointer) }

    /// Reads everything that is pending as a UTF-8 string.
    func readAll() -> String {
        let pending = Int(BIO_ctrl_pending(pointer))
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            let read = pending == 0 ? 0 : BIO_read(pointer, buffer.baseAddress, Int32(pending))
            precondition(Int(read) == pending, "BIO_read failed: \(OpenSSLErrors.drain())")
            count = pending
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
