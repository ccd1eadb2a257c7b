import Foundation
import Testing
import WebAuthn

/// `sesame webauthn verify-registration` and `verify-authentication` with a post-quantum (ML-DSA-65) passkey: the
/// dilithium-py vectors of Tests/WebAuthnTests/Vectors/mldsa, fed to the executable as a browser's JSON.
@Suite struct MLDSACommandTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../WebAuthnTests/Vectors/mldsa").standardized

    static func vector(_ name: String) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("\(name).json")))
        return try #require(object as? [String: Any]).compactMapValues { $0 as? String }
    }

    static func arguments(_ command: String, _ vector: [String: String]) throws -> [String] {
        ["webauthn", command, "--rp-id", try #require(vector["rpId"]), "--origin", try #require(vector["origin"]),
         "--challenge", try #require(vector["challenge"])]
    }

    static func registrationJSON(_ vector: [String: String]) throws -> [UInt8] {
        let id = try #require(vector["credentialId"])
        return Array("""
            {"id":"\(id)","rawId":"\(id)","type":"public-key","response":{"clientDataJSON":"\(try #require(vector["clientDataJSON"]))",\
            "attestationObject":"\(try #require(vector["attestationObject"]))","transports":["usb"]},"clientExtensionResults":{}}
            """.utf8)
    }

    static func authenticationJSON(_ vector: [String: String], signature: String? = nil) throws -> [UInt8] {
        let id = try #require(vector["credentialId"])
        return Array("""
            {"id":"\(id)","rawId":"\(id)","type":"public-key","response":{"clientDataJSON":"\(try #require(vector["clientDataJSON"]))",\
            "authenticatorData":"\(try #require(vector["authenticatorData"]))","signature":"\(try signature ?? #require(vector["signature"]))"},\
            "clientExtensionResults":{}}
            """.utf8)
    }

    @Test("registers an ML-DSA-65 passkey, then verifies its assertion with the key the registration printed")
    func registrationThenAuthentication() throws {
        let registration = try Self.vector("registration-mldsa65-packed")
        let registered = try SesameProcess.run(try Self.arguments("verify-registration", registration),
                                               stdin: try Self.registrationJSON(registration))
        #expect(registered.status == 0, "\(registered.stdout) \(registered.stderr)")
        let json = registered.json
        #expect(json["verified"] as? Bool == true)
        #expect(json["algorithm"] as? Int == -49)
        #expect(json["format"] as? String == "packed")
        #expect(json["attestationType"] as? String == "self")
        #expect(json["publicKey"] as? String == registration["credentialPublicKey"])
        let publicKey = try #require(json["publicKey"] as? String)

        let authentication = try Self.vector("authentication-mldsa65-packed")
        let signedIn = try SesameProcess.run(try Self.arguments("verify-authentication", authentication)
                                                 + ["--public-key", publicKey, "--sign-count", "0", "--require-user-verification"],
                                             stdin: try Self.authenticationJSON(authentication))
        #expect(signedIn.status == 0, "\(signedIn.stdout) \(signedIn.stderr)")
        #expect(signedIn.json["verified"] as? Bool == true)
        #expect(signedIn.json["newSignCount"] as? Int == 1)

        // The same assertion with one signature byte changed fails with the stable code.
        var signature = try Base64URL.decode(try #require(authentication["signature"]))
        signature[100] ^= 0x01
        let forged = try SesameProcess.run(try Self.arguments("verify-authentication", authentication)
                                               + ["--public-key", publicKey, "--sign-count", "0"],
                                           stdin: try Self.authenticationJSON(authentication, signature: Base64URL.encode(signature)))
        #expect(forged.status == 1)
        #expect(forged.json["error"] as? String == "invalid_signature")
    }
}
