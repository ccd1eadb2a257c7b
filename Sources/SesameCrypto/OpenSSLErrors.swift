internal import COpenSSL

/// Reads and clears OpenSSL's thread-local error queue.
enum OpenSSLErrors {
    /// Drains the queue and returns its entries joined by "; " (empty when there were none).
    static func drain() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.joined(separator: "; ")
    }

    /// Clears the queue without formatting it (hot paths).
    @inline(__always)
    static func clear() { ERR_clear_error() }
}

extension CryptoError {
    /// Creates an error whose detail is `context` followed by the drained OpenSSL error queue.
    static func openSSL(_ code: Code, _ context: String, file: String = #fileID, line: Int = #line) -> CryptoError {
        let queue = OpenSSLErrors.drain()
        return CryptoError(code, queue.isEmpty ? context : "\(context): \(queue)", file: file, line: line)
    }
}

/// Runs an OpenSSL `d2i_*` decoder over `der` and reports how many bytes it consumed.
///
/// `d2i` advances the pointer it is given, so it gets a copy; callers compare the count with `der.count` to refuse
/// trailing bytes, and free a returned object they reject.
func decodeDER(_ der: [UInt8], _ d2i: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?)
    -> (object: OpaquePointer?, consumed: Int)
{
    der.withUnsafeBytes { buffer in
        let start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var cursor: UnsafePointer<UInt8>? = start
        let object = d2i(&cursor, buffer.count)
        return (object, cursor.map { $0 - start } ?? 0)
    }
}
