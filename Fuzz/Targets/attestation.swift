// libFuzzer target `attestation`: `AttestationObject(cborEncoded:)` and a full registration ceremony
// (`RegistrationVerifier.verify`) of module WebAuthn, with the input as the attestation object.
//
// The ceremony uses a fixed relying party (`example.org`, origin `https://example.org`, user verification not
// required) and a fixed valid clientDataJSON for a fixed 32-byte challenge, so every input that parses reaches
// the authenticator data checks, COSE key parsing and the attestation statement formats (none, packed with and
// without x5c, fido-u2f, tpm, android-key, android-safetynet, apple: x5c certificate parsing with OpenSSL,
// signature checks, the certificate rules of §8.2.1 and §8.3.1, the TPM structures, the Android key
// description, the SafetyNet JWS and the Apple nonce extension).
//
// To let mutations of the W3C seed objects get past the signature check (and so reach the certificate
// requirements with mutated certificates), an attestation object whose credential ID starts like one of the
// W3C registration vectors' is verified with that vector's own challenge and clientDataJSON instead; these are
// fixed, valid pairs copied from Tests/WebAuthnTests/Vectors/w3c-webauthn-l3.
//
// Checks: nothing crashes; a verified registration reports the parsed object's format, credential ID,
// sign count and flags.
import Foundation
import WebAuthn

private let policy = RelyingPartyPolicy(id: "example.org", origins: ["https://example.org"], requiresUserVerification: false)

/// The default ceremony: challenge 0x00...0x1f and its clientDataJSON.
private let defaultChallenge = (0..<32).map { UInt8($0) }
private let defaultClientDataJSON = Array(
    #"{"type":"webauthn.create","challenge":"\#(Base64URL.encode(defaultChallenge))","origin":"https://example.org","crossOrigin":false}"#.utf8)

/// (credential ID prefix, challenge, clientDataJSON), base64url, from the W3C registration vectors.
private let vectorCeremonies: [(String, String, String)] = [
    // registration-ed25519-packed.json
    ("zp-EDtllmVgM", "qKv52r3GsN9jRms5vanoo0o04YUzelnxxXmZBnbTs70",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoicUt2NTJyM0dzTjlqUm1zNXZhbm9vMG8wNFlVemVsbnh4WG1aQm5iVHM3MCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2UsImV4dHJhRGF0YSI6ImNsaWVudERhdGFKU09OIG1heSBiZSBleHRlbmRlZCB3aXRoIGFkZGl0aW9uYWwgZmllbGRzIGluIHRoZSBmdXR1cmUsIHN1Y2ggYXMgdGhpczogQl9EVDVnN1pEXy05T1RMWVg1SXZFUT09In0"),
    // registration-es256-fido-u2f.json
    ("pLpuLSz-xDZI", "4HQ3KZC5yqUHoiffxnsAN4DEUyU4DRqQwg-B7X0IDAY",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiNEhRM0taQzV5cVVIb2lmZnhuc0FONERFVXlVNERScVF3Zy1CN1gwSURBWSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2V9"),
    // registration-es256-none-long-credential-id.json
    ("OnYaThZ0rWxD", "ERPHJlzPXmUSQoL6HXgZp6FMuFOapM2-x0h-XzXY7Gw",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiRVJQSEpselBYbVVTUW9MNkhYZ1pwNkZNdUZPYXBNMi14MGgtWHpYWTdHdyIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2V9"),
    // registration-es256-none.json
    ("-R85HbTJsv3g", "AMMPt4UxxGTStncdq417YDwBFi8vpIa-pw8oOuVW4TA",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiQU1NUHQ0VXh4R1RTdG5jZHE0MTdZRHdCRmk4dnBJYS1wdzhvT3VWVzRUQSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2UsImV4dHJhRGF0YSI6ImNsaWVudERhdGFKU09OIG1heSBiZSBleHRlbmRlZCB3aXRoIGFkZGl0aW9uYWwgZmllbGRzIGluIHRoZSBmdXR1cmUsIHN1Y2ggYXMgdGhpczogQmtRZURqZGNUQnJYQmlBd0pUTEU1UT09In0"),
    // registration-es256-packed-self.json
    ("RV7zTiBDqH2z", "eGnCt3LUtY66k3jPjynibPk1qnffDaifqZwL3Ap29-U",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiZUduQ3QzTFV0WTY2azNqUGp5bmliUGsxcW5mZkRhaWZxWndMM0FwMjktVSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2UsImV4dHJhRGF0YSI6ImNsaWVudERhdGFKU09OIG1heSBiZSBleHRlbmRlZCB3aXRoIGFkZGl0aW9uYWwgZmllbGRzIGluIHRoZSBmdXR1cmUsIHN1Y2ggYXMgdGhpczogVTloVFh2S0UyVVJrTW5iXzB4WUhWZz09In0"),
    // registration-es256-packed.json
    ("yab1s0YtAoc_", "wRhKX934BF4T3Ef1S2H1pla2ZrWQGPFthw6SVumVIBI",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoid1JoS1g5MzRCRjRUM0VmMVMySDFwbGEyWnJXUUdQRnRodzZTVnVtVklCSSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2UsImV4dHJhRGF0YSI6ImNsaWVudERhdGFKU09OIG1heSBiZSBleHRlbmRlZCB3aXRoIGFkZGl0aW9uYWwgZmllbGRzIGluIHRoZSBmdXR1cmUsIHN1Y2ggYXMgdGhpczogOWE4Yk5ZaktDZ1dyQlhVLWZDbDFhZz09In0"),
    // registration-es384-packed.json
    ("lTri3Z8osaHV", "VnsDCz4Ya8HRad1Ft5-eDYbx_WNHTaPq3lvbjbN5oMM",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiVm5zREN6NFlhOEhSYWQxRnQ1LWVEWWJ4X1dOSFRhUHEzbHZiamJONW9NTSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2V9"),
    // registration-es512-packed.json
    ("0X1a9-PzfFZi", "TuIgzZKwfhFFHLTCAcV1W9h5hI5JKpsS15E1xidk3C_Sjq1ICMr-WtHej6ngjUqO6v6k37Mzh3sCvFA_R107DBOUp2g7qvTyR3gp97jPdQlImFVYdIwHMGg5b8_c0_JFvyA45rs411MnaKrRO-jBGPcnci50JhOQQenKylA4hMU",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiVHVJZ3paS3dmaEZGSExUQ0FjVjFXOWg1aEk1Sktwc1MxNUUxeGlkazNDX1NqcTFJQ01yLVd0SGVqNm5nalVxTzZ2NmszN016aDNzQ3ZGQV9SMTA3REJPVXAyZzdxdlR5UjNncDk3alBkUWxJbUZWWWRJd0hNR2c1YjhfYzBfSkZ2eUE0NXJzNDExTW5hS3JSTy1qQkdQY25jaTUwSmhPUVFlbkt5bEE0aE1VIiwib3JpZ2luIjoiaHR0cHM6Ly9leGFtcGxlLm9yZyIsImNyb3NzT3JpZ2luIjpmYWxzZSwiZXh0cmFEYXRhIjoiY2xpZW50RGF0YUpTT04gbWF5IGJlIGV4dGVuZGVkIHdpdGggYWRkaXRpb25hbCBmaWVsZHMgaW4gdGhlIGZ1dHVyZSwgc3VjaCBhcyB0aGlzOiBvM3FWak9MMnRUV200R3hreklfUWdnPT0ifQ"),
    // registration-es256-tpm.json
    ("7Ce-x1IciUu7", "z8gs3xzu6HYSCqiPA2TwkQGTRgz7l6MXsv4JBpT5opk",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiejhnczN4enU2SFlTQ3FpUEEyVHdrUUdUUmd6N2w2TVhzdjRKQnBUNW9wayIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2V9"),
    // registration-es256-apple.json
    ("nEpYhq-Sg9m-", "9_aIIThSAHd1AJz4wJb9qJ1guan7WlDdgd2YmK9aBgk",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiOV9hSUlUaFNBSGQxQUp6NHdKYjlxSjFndWFuN1dsRGRnZDJZbUs5YUJnayIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2UsImV4dHJhRGF0YSI6ImNsaWVudERhdGFKU09OIG1heSBiZSBleHRlbmRlZCB3aXRoIGFkZGl0aW9uYWwgZmllbGRzIGluIHRoZSBmdXR1cmUsIHN1Y2ggYXMgdGhpczogVGpMUG5wT2FYUVVyRk5jYkgydFRaQT09In0"),
    // registration-rs256-packed.json
    ("mSoYrMg_Z1M2", "vqjwdwAJvVfywN9v6p90Oifkthu-kjyGLHqtep_I5KY",
     "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoidnFqd2R3QUp2VmZ5d045djZwOTBPaWZrdGh1LWtqeUdMSHF0ZXBfSTVLWSIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5vcmciLCJjcm9zc09yaWdpbiI6ZmFsc2V9"),
]

private let ceremonies: [(idPrefix: [UInt8], challenge: [UInt8], clientDataJSON: [UInt8])] = vectorCeremonies.map {
    (try! Base64URL.decode($0.0), try! Base64URL.decode($0.1), try! Base64URL.decode($0.2))
}

private let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01, fixed so runs reproduce

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAttestation(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let object = try? AttestationObject(cborEncoded: bytes) else { return 0 }
    _ = object.statement
    let credentialID = object.authenticatorData.attestedCredentialData?.credentialID ?? []

    var challenge = defaultChallenge, clientDataJSON = defaultClientDataJSON
    if let match = ceremonies.first(where: { credentialID.starts(with: $0.idPrefix) }) {
        (challenge, clientDataJSON) = (match.challenge, match.clientDataJSON)
    }
    let credential = RegistrationCredential(rawID: credentialID, clientDataJSON: clientDataJSON, attestationObject: bytes)
    let expectations = RegistrationExpectations(policy: policy, challenge: challenge)
    guard let verified = try? RegistrationVerifier.verify(credential, expectations: expectations, at: now) else { return 0 }

    let authData = object.authenticatorData
    guard verified.format == object.format, verified.credentialID == credentialID,
          verified.signCount == authData.signCount, verified.userVerified == authData.isUserVerified,
          verified.backupEligible == authData.isBackupEligible, verified.backedUp == authData.isBackedUp,
          verified.publicKey.cborEncoded == authData.attestedCredentialData?.credentialPublicKey
    else { fatalError("verified registration disagrees with the parsed attestation object") }
    return 0
}
