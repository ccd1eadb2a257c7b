/// A QR code (ISO/IEC 18004) of a short text, written here: byte mode, error correction level M, the smallest version
/// from 1 to 40 that holds the text, and the mask with the lowest penalty score, drawn as SVG.
///
/// It encodes what the server itself builds (hand-off URLs), never more than ``maximumBytes``. The structure follows
/// the standard's steps: data codewords (§7.4), Reed-Solomon error correction over GF(256) (§7.5), interleaving in
/// blocks (§7.6), function patterns (§7.3), the zigzag placement (§7.7.3), masking (§7.8) and the format and version
/// information (§7.9, §7.10).
struct QRCode: Sendable {
    /// Modules per side.
    let size: Int
    /// `modules[y][x]`: true for dark.
    private(set) var modules: [[Bool]]
    private var isFunction: [[Bool]]

    /// The most a level-M QR code holds in byte mode (version 40).
    static let maximumBytes = 2331

    // Level M, by version (index 0 unused): error correction codewords per block, and number of blocks (Table 9).
    private static let eccPerBlock = [-1, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28,
                                      28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28]
    private static let blocks = [-1, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26,
                                 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49]
    /// The format information's bits for level M.
    private static let levelBits = 0

    /// Encodes `bytes`; nil when they do not fit a version-40 symbol.
    init?(bytes: [UInt8]) {
        guard let version = (1...40).first(where: { Self.dataCodewords($0) * 8 >= 4 + Self.countBits($0) + bytes.count * 8 }) else {
            return nil
        }
        size = version * 4 + 17
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        isFunction = modules
        drawFunctionPatterns(version)
        drawCodewords(Self.interleavedCodewords(Self.dataCodewords(bytes, version), version))
        // §7.8.3: the mask with the lowest penalty.
        var best = (mask: 0, penalty: Int.max)
        for mask in 0..<8 {
            applyMask(mask)
            drawFormatBits(mask)
            let score = penalty()
            if score < best.penalty { best = (mask, score) }
            applyMask(mask)  // XOR again: undone
        }
        applyMask(best.mask)
        drawFormatBits(best.mask)
    }

    /// The code as an SVG image: one unit per module and a quiet zone of four modules (§7.3.8).
    var svg: String {
        let side = size + 8
        var path = ""
        for y in 0..<size {
            for x in 0..<size where modules[y][x] { path += "M\(x + 4),\(y + 4)h1v1h-1z" }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * 8)" height="\(side * 8)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>

            """
    }

    // MARK: Data and error correction

    private static func countBits(_ version: Int) -> Int { version < 10 ? 8 : 16 }

    /// Modules left for data and error correction once the function patterns are drawn.
    private static func rawModules(_ version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    private static func dataCodewords(_ version: Int) -> Int {
        rawModules(version) / 8 - eccPerBlock[version] * blocks[version]
    }

    /// Mode indicator, count, the bytes, terminator and padding (§7.4).
    private static func dataCodewords(_ bytes: [UInt8], _ version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) } }
        append(0b0100, 4)
        append(bytes.count, countBits(version))
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCodewords(version) * 8
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while codewords.count < capacity / 8 {
            codewords.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        return codewords
    }

    /// The data split into blocks, each followed by its error correction, interleaved (§7.6).
    private static func interleavedCodewords(_ data: [UInt8], _ version: Int) -> [UInt8] {
        let count = blocks[version], eccLength = eccPerBlock[version]
        let raw = rawModules(version) / 8
        let shortBlocks = count - raw % count, shortLength = raw / count
        let divisor = reedSolomonDivisor(eccLength)
        var split: [[UInt8]] = []
        var offset = 0
        for index in 0..<count {
            let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
            var block = Array(data[offset..<offset + length])
            offset += length
            let ecc = reedSolomonRemainder(block, divisor)
            if index < shortBlocks { block.append(0) }  // a place holder, skipped below
            split.append(block + ecc)
        }
        var result: [UInt8] = []
        for i in 0..<split[0].count {
            for (index, block) in split.enumerated() where i != shortLength - eccLength || index >= shortBlocks {
                result.append(block[i])
            }
        }
        return result
    }

    /// Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1.
    private static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z: UInt16 = 0
        for i in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= UInt16((y >> UInt8(i)) & 1) * UInt16(x)
        }
        return UInt8(truncatingIfNeeded: z)
    }

    /// The generator polynomial of `degree` error correction codewords, highest term first, leading 1 left out.
    private static func reedSolomonDivisor(_ degree: Int) -> [UInt8] {
        var result = Array(repeating: UInt8(0), count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                result[j] = multiply(result[j], root)
                if j + 1 < degree { result[j] ^= result[j + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    private static func reedSolomonRemainder(_ data: [UInt8], _ divisor: [UInt8]) -> [UInt8] {
        var result = Array(repeating: UInt8(0), count: divisor.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for i in 0..<result.count { result[i] ^= multiply(divisor[i], factor) }
        }
        return result
    }

    // MARK: Drawing

    private mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        isFunction[y][x] = true
    }

    private mutating func drawFunctionPatterns(_ version: Int) {
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        drawFinder(3, 3)
        drawFinder(size - 4, 3)
        drawFinder(3, size - 4)
        let positions = alignmentPositions(version)
        let last = positions.count - 1
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() where !((i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)) {
                for dy in -2...2 {
                    for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(0)  // reserves the area; redrawn with the chosen mask
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for i in 0..<18 {
                let dark = (bits >> i) & 1 == 1
                let a = size - 11 + i % 3, b = i / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }
    }

    /// A finder pattern centred on (x, y), with its light separator (clipped at the edges).
    private mutating func drawFinder(_ x: Int, _ y: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let distance = max(abs(dx), abs(dy))
                let column = x + dx, row = y + dy
                if (0..<size).contains(column) && (0..<size).contains(row) { set(column, row, distance != 2 && distance != 4) }
            }
        }
    }

    private func alignmentPositions(_ version: Int) -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let step = (version * 8 + count * 3 + 5) / (count * 4 - 4) * 2
        return [6] + (0..<(count - 1)).map { size - 7 - $0 * step }.reversed()
    }

    private mutating func drawFormatBits(_ mask: Int) {
        let data = Self.levelBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)  // the dark module
    }

    /// Places the codewords' bits in the two-column zigzag from the bottom right, skipping the vertical timing column.
    private mutating func drawCodewords(_ data: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    if !isFunction[y][x] && index < data.count * 8 {
                        modules[y][x] = (data[index >> 3] >> (7 - (index & 7))) & 1 == 1
                        index += 1
                    }
                }
            }
            right -= 2
        }
    }

    private mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y][x] {
                let flip = switch mask {
                case 0: (x + y) % 2 == 0
                case 1: y % 2 == 0
                case 2: x % 3 == 0
                case 3: (x + y) % 3 == 0
                case 4: (x / 3 + y / 2) % 2 == 0
                case 5: x * y % 2 + x * y % 3 == 0
                case 6: (x * y % 2 + x * y % 3) % 2 == 0
                default: ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// The penalty score of §7.8.3: runs of one colour, 2x2 blocks, finder-like patterns, and the dark balance.
    private func penalty() -> Int {
        var score = 0
        let columns = (0..<size).map { x in (0..<size).map { y in modules[y][x] } }
        for line in modules + columns {
            var run = 1
            for i in 1..<size {
                if line[i] == line[i - 1] {
                    run += 1
                    if run == 5 { score += 3 } else if run > 5 { score += 1 }
                } else {
                    run = 1
                }
            }
            // 1:1:3:1:1 with four light modules on either side (the light margin outside counts as light).
            let padded = Array(repeating: false, count: 4) + line + Array(repeating: false, count: 4)
            let pattern = [true, false, true, true, true, false, true]
            for start in 0...(padded.count - 11) {
                let window = padded[start..<start + 11]
                if Array(window.prefix(7)) == pattern && !window.suffix(4).contains(true) { score += 40 }
                if Array(window.suffix(7)) == pattern && !window.prefix(4).contains(true) { score += 40 }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = modules[y][x]
                if modules[y][x + 1] == colour && modules[y + 1][x] == colour && modules[y + 1][x + 1] == colour { score += 3 }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let total = size * size
        // 10 for every 5% the dark share strays from 50% (the side is odd, so it never is exactly 50%).
        score += max(0, (abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
        return score
    }
}
