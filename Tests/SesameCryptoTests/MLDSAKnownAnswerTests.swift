import Foundation
import Testing
@testable import SesameCrypto

/// NIST's ACVP known answers for ML-DSA signature verification (FIPS 204), all three parameter sets: valid signatures
/// and the four ways ACVP breaks them ("too many hints", "modify signature", "z too large", "modify message").
/// The subset and its source are described in Data/README.md.
@Suite struct MLDSAKnownAnswerTests {
    struct Vectors: Decodable {
        struct Group: Decodable {
            let tgId: Int
            let parameterSet: String
            let pk: String
            let tests: [Test]
        }

        struct Test: Decodable {
            let tcId: Int
            let testPassed: Bool
            let reason: String
            let message: String
            let signature: String
        }

        let source: String
        let testGroups: [Group]
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let parameterSet: MLDSAParameterSet
        let pk: [UInt8]
        let tcId: Int
        let testPassed: Bool
        let reason: String
        let message: [UInt8]
        let signature: [UInt8]

        var testDescription: String { "tcId \(tcId) \(parameterSet) \(reason)" }
    }

    static let cases: [Case] = {
        // A missing or broken fixture must fail the run, not skip it: `knownAnswersArePresent` checks the count.
        guard let data = try? Data(contentsOf: Fixture.directory.appendingPathComponent("mldsa-acvp-sigver.json")),
              let vectors = try? JSONDecoder().decode(Vectors.self, from: data)
        else { return [] }
        return vectors.testGroups.flatMap { group in
            group.tests.compactMap { test in
                guard let set = MLDSATests.parameterSet(named: group.parameterSet) else { return nil }
                return Case(parameterSet: set, pk: [UInt8](hex: group.pk), tcId: test.tcId, testPassed: test.testPassed,
                            reason: test.reason, message: [UInt8](hex: test.message), signature: [UInt8](hex: test.signature))
            }
        }
    }()

    @Test("the ACVP subset covers every parameter set, passing and failing, with each failure reason")
    func knownAnswersArePresent() {
        #expect(Self.cases.count == 18)
        for set in MLDSAParameterSet.allCases {
            let ofSet = Self.cases.filter { $0.parameterSet == set }
            #expect(Set(ofSet.map(\.reason)) == ["no modification", "too many hints", "modify signature", "z too large", "modify message"])
            #expect(ofSet.filter(\.testPassed).count == 2)
        }
    }

    @Test("ML-DSA.Verify_internal gives ACVP's answer", arguments: cases)
    func verifyInternal(_ vector: Case) throws {
        let key = try MLDSAPublicKey(rawRepresentation: vector.pk, parameterSet: vector.parameterSet)
        let verdict: Bool
        do {
            verdict = try key.verifyInternal(vector.signature, formattedMessage: [vector.message])
        } catch {
            // Only a malformed hint may fail to decode; ACVP's "too many hints" cases are malformed encodings.
            #expect(vector.reason == "too many hints", "\(error.debugDescription)")
            verdict = false
        }
        #expect(verdict == vector.testPassed)
    }

    @Test("a valid ACVP signature stops verifying under the external interface, which prefixes 0 || 0 to M′")
    func externalInterfaceDiffers() throws {
        for vector in Self.cases where vector.testPassed {
            let key = try MLDSAPublicKey(rawRepresentation: vector.pk, parameterSet: vector.parameterSet)
            #expect(!key.isValidSignature(vector.signature, for: vector.message))
            // Verify(pk, M, σ, ε) is Verify_internal(pk, 0 || 0 || M, σ): with M′ = 0 || 0 || M′ stripped it matches.
            if vector.message.count >= 2, vector.message[0] == 0, vector.message[1] == 0 {
                #expect(key.isValidSignature(vector.signature, for: Array(vector.message.dropFirst(2))))
            }
        }
    }
}
