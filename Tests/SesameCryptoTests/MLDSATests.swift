import Foundation
import SesameTestSupport
import Testing
@testable import SesameCrypto

/// ML-DSA (FIPS 204) verification: the building blocks, dilithium-py's signatures and tampered cases, and every
/// decoding check. The NIST ACVP known answers are in `MLDSAKnownAnswerTests`.
@Suite struct MLDSATests {
    static let sets: [MLDSAParameterSet] = MLDSAParameterSet.allCases

    static func parameterSet(named name: String) -> MLDSAParameterSet? { sets.first { $0.description == name } }

    // MARK: Building blocks

    @Test("SHAKE128 and SHAKE256 give the FIPS 202 outputs of the empty string, one-shot and read byte by byte")
    func shake() {
        #expect(SHAKE.shake128.hash(parts: [], outputByteCount: 16).hex == "7f9c2ba4e88f827d616045507605853e")
        #expect(SHAKE.shake256.hash(parts: [], outputByteCount: 16).hex == "46b9dd2b0ba88d13233b3feb743eeb24")
        // Pieces hash as their concatenation.
        #expect(SHAKE.shake256.hash(parts: [Array("ab".utf8), [], Array("c".utf8)], outputByteCount: 40)
            == SHAKE.shake256.hash(Array("abc".utf8), outputByteCount: 40))
        // The reader extends its output when it runs out, and the bytes are the same as one long output.
        var reader = XOFReader(.shake128, input: [1, 2, 3], initialByteCount: 1)
        let streamed = (0..<500).map { _ in reader.readByte() }
        #expect(streamed == SHAKE.shake128.hash([1, 2, 3], outputByteCount: 500))
    }

    @Test("the ζ table matches the reference implementation's, and Montgomery reduction divides by 2^32")
    func zetas() {
        #expect(MLDSARing.zetas[1] == 25847)
        #expect(MLDSARing.zetas[2] == -2608894)
        #expect(MLDSARing.zetas[255] == 1976782)
        // 2^32 ≡ −4186625 (mod q): reducing it gives 1.
        #expect(MLDSARing.montgomeryReduce(4_294_967_296) == 1)
        #expect(MLDSARing.montgomeryReduce(0) == 0)
        #expect(MLDSARing.bitReversedCheck())
    }

    /// A random polynomial with coefficients in (−q, q).
    static func randomPolynomial(_ generator: inout some RandomNumberGenerator) -> [Int32] {
        (0..<256).map { _ in Int32.random(in: (1 - MLDSARing.q)...(MLDSARing.q - 1), using: &generator) }
    }

    static func canonical(_ value: Int64) -> Int64 {
        let r = value % Int64(MLDSARing.q)
        return r < 0 ? r + Int64(MLDSARing.q) : r
    }

    @Test("NTT, pointwise product and inverse NTT multiply in Z_q[X]/(X^256 + 1) like the schoolbook product")
    func negacyclicProduct() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            let a = Self.randomPolynomial(&generator), b = Self.randomPolynomial(&generator)
            var expected = [Int64](repeating: 0, count: 256)
            for i in 0..<256 {
                for j in 0..<256 {
                    let product = Int64(a[i]) * Int64(b[j]) % Int64(MLDSARing.q)
                    if i + j < 256 { expected[i + j] += product } else { expected[i + j - 256] -= product }
                }
            }
            var aHat = a, bHat = b, product = [Int32](repeating: 0, count: 256)
            aHat.withUnsafeMutableBufferPointer { MLDSARing.ntt($0) }
            bHat.withUnsafeMutableBufferPointer { MLDSARing.ntt($0) }
            aHat.withUnsafeBufferPointer { x in
                bHat.withUnsafeBufferPointer { y in product.withUnsafeMutableBufferPointer { MLDSARing.pointwise(x, y, accumulatingInto: $0) } }
            }
            product.withUnsafeMutableBufferPointer { MLDSARing.inverseNTT($0) }
            #expect(product.map { Self.canonical(Int64($0)) } == expected.map(Self.canonical))
            #expect(product.allSatisfy { $0.magnitude < UInt32(MLDSARing.q) })
        }
    }

    @Test("Decompose splits r into r1·2γ2 + r0 with r0 in (−γ2, γ2], and UseHint moves r1 by one", arguments: [
        (MLDSARing.q - 1) / 88, (MLDSARing.q - 1) / 32,
    ])
    func decompose(gamma2: Int32) {
        let m = (MLDSARing.q - 1) / (2 * gamma2)
        for r in stride(from: Int32(0), to: MLDSARing.q, by: 997) + [MLDSARing.q - 1, gamma2, gamma2 + 1, 2 * gamma2] {
            let (r1, r0) = MLDSARing.decompose(r, gamma2: gamma2)
            #expect(Self.canonical(Int64(r1) * Int64(2 * gamma2) + Int64(r0)) == Int64(r))
            #expect(r1 >= 0 && r1 < m)
            #expect(r0 > -gamma2 - 1 && r0 <= gamma2)
            #expect(MLDSARing.useHint(false, r, gamma2: gamma2) == r1)
            let moved = MLDSARing.useHint(true, r, gamma2: gamma2)
            #expect(moved == (r0 > 0 ? (r1 + 1) % m : (r1 + m - 1) % m))
        }
    }

    @Test("SampleInBall and RejNTTPoly read the same stream however much SHAKE output they start with")
    func samplingStreams() {
        let seed = Array(SHAKE.shake256.hash([9], outputByteCount: 48))
        let challenge = MLDSASampling.sampleInBall(seed, tau: 49)
        #expect(MLDSASampling.sampleInBall(seed, tau: 49, initialByteCount: 1) == challenge)
        #expect(challenge.filter { $0 != 0 }.count == 49 && challenge.allSatisfy { $0 >= -1 && $0 <= 1 })

        let rho = Array(SHAKE.shake128.hash([7], outputByteCount: 34))
        var first = [Int32](repeating: 0, count: 256), second = first
        first.withUnsafeMutableBufferPointer { MLDSASampling.rejectionSampleNTT(rho, into: $0) }
        second.withUnsafeMutableBufferPointer { MLDSASampling.rejectionSampleNTT(rho, into: $0, initialByteCount: 3) }
        #expect(first == second)
        #expect(first.allSatisfy { $0 >= 0 && $0 < MLDSARing.q })
    }

    @Test("parameter sets have FIPS 204 Table 2's sizes")
    func sizes() {
        #expect(Self.sets.map(\.publicKeyByteCount) == [1312, 1952, 2592])
        #expect(Self.sets.map(\.signatureByteCount) == [2420, 3309, 4627])
        #expect(Self.sets.map(\.description) == ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"])
    }

    // MARK: dilithium-py

    /// dilithium-py's cases, made once per test process.
    static let dilithium: Result<DilithiumPy.Cases, PythonEnvironment.Failure> = DilithiumPy.cases(keys: 2, messages: 3, seed: 20_261_201)

    @Test("agrees with dilithium-py on its signatures and on every tampered variant, for all three parameter sets")
    func crossCheck() throws {
        let generated = try Self.dilithium.get()
        #expect(generated.implementation == "dilithium-py \(DilithiumPy.version)")
        // 3 sets × 2 keys × 3 messages × 8 variants.
        #expect(generated.cases.count == 144)
        for set in Self.sets {
            #expect(generated.cases.contains { $0.parameterSet == set.description && $0.expected })
            #expect(generated.cases.contains { $0.parameterSet == set.description && !$0.expected })
        }
        for testCase in generated.cases {
            let set = try #require(Self.parameterSet(named: testCase.parameterSet))
            let key = try MLDSAPublicKey(rawRepresentation: [UInt8](hex: testCase.pk), parameterSet: set)
            let verdict = key.isValidSignature([UInt8](hex: testCase.signature), for: [UInt8](hex: testCase.message),
                                               context: [UInt8](hex: testCase.context))
            #expect(verdict == testCase.expected, "\(testCase)")
            #expect(testCase.expected == (testCase.kind == "valid"), "\(testCase): dilithium-py's own verdict is unexpected")
        }
    }

    // MARK: Decoding checks

    /// One valid dilithium-py signature per parameter set, with its key and message.
    static func validCase(_ set: MLDSAParameterSet) throws -> (key: MLDSAPublicKey, message: [UInt8], context: [UInt8], signature: [UInt8]) {
        let generated = try dilithium.get()
        let found = try #require(generated.cases.first { $0.parameterSet == set.description && $0.kind == "valid" })
        return (try MLDSAPublicKey(rawRepresentation: [UInt8](hex: found.pk), parameterSet: set), [UInt8](hex: found.message),
                [UInt8](hex: found.context), [UInt8](hex: found.signature))
    }

    @Test("refuses a public key of any other length", arguments: sets)
    func publicKeyLengths(_ set: MLDSAParameterSet) {
        for length in [0, 32, set.publicKeyByteCount - 1, set.publicKeyByteCount + 1] {
            #expect(throws: CryptoError.invalidKey) { try MLDSAPublicKey(rawRepresentation: [UInt8](repeating: 0, count: length), parameterSet: set) }
        }
        for other in Self.sets where other != set {
            #expect(throws: CryptoError.invalidKey) {
                try MLDSAPublicKey(rawRepresentation: [UInt8](repeating: 0, count: other.publicKeyByteCount), parameterSet: set)
            }
        }
        #expect(throws: Never.self) { try MLDSAPublicKey(rawRepresentation: [UInt8](repeating: 0xff, count: set.publicKeyByteCount), parameterSet: set) }
    }

    @Test("refuses a signature of any other length, and answers false without trapping", arguments: sets)
    func signatureLengths(_ set: MLDSAParameterSet) throws {
        let valid = try Self.validCase(set)
        #expect(valid.key.isValidSignature(valid.signature, for: valid.message, context: valid.context))
        for signature in [[], Array(valid.signature.dropLast()), valid.signature + [0], valid.signature + valid.signature] {
            #expect(throws: CryptoError.invalidSignatureEncoding) { try MLDSASignature(rawRepresentation: signature, parameterSet: set) }
            #expect(!valid.key.isValidSignature(signature, for: valid.message, context: valid.context))
        }
        #expect(!valid.key.isValidSignature(valid.signature, for: valid.message, context: [UInt8](repeating: 0, count: 256)))
    }

    /// `signature` with its hint bytes (the last ω + k) replaced by `hint`.
    static func replacingHint(_ signature: [UInt8], _ set: MLDSAParameterSet, _ edit: (inout [UInt8], Int, Int) -> Void) -> [UInt8] {
        let p = set.parameters
        var hint = Array(signature.suffix(p.omega + p.k))
        edit(&hint, p.omega, p.k)
        return Array(signature.dropLast(p.omega + p.k)) + hint
    }

    @Test("refuses every malformed hint encoding (HintBitUnpack's ⊥)", arguments: sets)
    func malformedHints(_ set: MLDSAParameterSet) throws {
        let valid = try Self.validCase(set)
        let p = set.parameters
        let decoded = try MLDSASignature(rawRepresentation: valid.signature, parameterSet: set)
        let total = decoded.hint.filter { $0 }.count
        #expect(total <= p.omega)
        try #require(total >= 2, "the sample signature has too few hints to mutate")

        func expectMalformed(_ why: String, _ edit: (inout [UInt8], Int, Int) -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            let signature = Self.replacingHint(valid.signature, set, edit)
            let error = #expect(throws: CryptoError.invalidSignatureEncoding, Comment(rawValue: why), sourceLocation: sourceLocation) {
                try MLDSASignature(rawRepresentation: signature, parameterSet: set)
            }
            #expect(error?.debugDescription.contains("hint") == true, sourceLocation: sourceLocation)
            #expect(!valid.key.isValidSignature(signature, for: valid.message, context: valid.context), sourceLocation: sourceLocation)
        }
        // Step 4: a running count above ω, or smaller than the one before.
        expectMalformed("count above ω") { y, omega, k in y[omega + k - 1] = UInt8(omega + 1) }
        expectMalformed("count 255") { y, omega, k in y[omega + k - 1] = 255 }
        expectMalformed("count decreases") { y, omega, k in
            // The first non-zero count drops below the one before it: give the first polynomial more than the second.
            if let i = (0..<k).first(where: { y[omega + $0] > 0 }), i + 1 < k { y[omega + i + 1] = y[omega + i] - 1 } else { y[omega] = 255 }
        }
        // Steps 7-8: positions within one polynomial that repeat or go down.
        let firstWithTwo = (0..<p.k).first { i in
            let start = i == 0 ? 0 : Int(valid.signature[valid.signature.count - p.k + i - 1])
            return Int(valid.signature[valid.signature.count - p.k + i]) - start >= 2
        }
        if let i = firstWithTwo {
            let start = i == 0 ? 0 : Int(valid.signature[valid.signature.count - p.k + i - 1])
            expectMalformed("repeated position") { y, _, _ in y[start + 1] = y[start] }
            expectMalformed("decreasing positions") { y, _, _ in y.swapAt(start, start + 1) }
        }
        // Steps 11-12: a non-zero byte after the last used position.
        if total < p.omega {
            expectMalformed("padding not zero") { y, omega, _ in y[omega - 1] = 1 }
        }
    }

    /// `signature` with coefficient `index` of z set to `value` (BitPack stores γ1 − z in `zBits` bits).
    static func replacingZ(_ signature: [UInt8], _ set: MLDSAParameterSet, index: Int, value: Int32) -> [UInt8] {
        let p = set.parameters
        var out = signature
        let encoded = UInt64(truncatingIfNeeded: p.gamma1 - value)
        for bit in 0..<p.zBits {
            let position = 8 * p.commitmentHashByteCount + index * p.zBits + bit
            let mask = UInt8(1) << UInt8(position % 8)
            if (encoded >> UInt64(bit)) & 1 == 1 { out[position / 8] |= mask } else { out[position / 8] &= ~mask }
        }
        return out
    }

    @Test("answers false for z on or beyond γ1 − β, including z = γ1, which decodes", arguments: sets)
    func zOutOfRange(_ set: MLDSAParameterSet) throws {
        let valid = try Self.validCase(set)
        let p = set.parameters
        let limit = p.gamma1 - p.beta
        for (index, value) in [(0, limit), (17, -limit), (255, p.gamma1), (256 * p.l - 1, -p.gamma1 + 1), (3, limit + 1)] {
            let signature = Self.replacingZ(valid.signature, set, index: index, value: value)
            let decoded = try MLDSASignature(rawRepresentation: signature, parameterSet: set)
            #expect(decoded.z[index] == value)
            #expect(!valid.key.isValidSignature(signature, for: valid.message, context: valid.context), "z[\(index)] = \(value)")
            #expect(try !valid.key.verifyInternal(signature, formattedMessage: [[0, UInt8(valid.context.count)], valid.context, valid.message]))
        }
        // Writing back the coefficient the signature already has changes nothing.
        let original = try MLDSASignature(rawRepresentation: valid.signature, parameterSet: set)
        #expect(Self.replacingZ(valid.signature, set, index: 5, value: original.z[5]) == valid.signature)
        #expect(original.z.allSatisfy { $0.magnitude < UInt32(limit) })
    }
}

extension MLDSARing {
    /// BitRev8 reverses 1 to 128, 3 to 192, and is its own inverse.
    static func bitReversedCheck() -> Bool {
        UInt8(1).bitReversed == 128 && UInt8(3).bitReversed == 192 && (0...255).allSatisfy { UInt8($0).bitReversed.bitReversed == UInt8($0) }
    }
}
