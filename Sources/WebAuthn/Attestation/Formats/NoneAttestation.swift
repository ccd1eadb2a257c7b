/// The `none` format: no statement at all.
///
/// - SeeAlso: [WebAuthn §8.7](https://www.w3.org/TR/webauthn-3/#sctn-none-attestation)
enum NoneAttestation: AttestationFormat {
    static let identifier = "none"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.7: attStmt is the empty map.
        guard statement.mapEntries?.isEmpty == true else {
            throw WebAuthnError(.malformedAttestationStatement, "none: attStmt is not empty")
        }
        return AttestationResult(type: .none, trustPath: [])
    }
}
