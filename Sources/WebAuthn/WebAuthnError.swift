/// The one error every WebAuthn parsing and verification step throws.
///
/// Each failure has a stable ``Code`` that callers, APIs and the command line may rely on, and a `detail`
/// naming the spec step that failed. Equality compares the code only, so tests can match on it.
/// The `description` shows the code only; `detail` stays in `debugDescription`, because telling a client which
/// check failed would give it an oracle.
public struct WebAuthnError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable identifier of the failed check (for example `origin_mismatch`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as a snake_case string; never changes once released.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Encodings
        public static let invalidBase64URL = Code("invalid_base64url")
        public static let malformedResponse = Code("malformed_response")
        public static let cborTruncated = Code("cbor_truncated")
        public static let cborTrailingBytes = Code("cbor_trailing_bytes")
        public static let cborLimitExceeded = Code("cbor_limit_exceeded")
        public static let cborMalformed = Code("cbor_malformed")
        // COSE keys
        public static let invalidCOSEKey = Code("invalid_cose_key")
        public static let unsupportedAlgorithm = Code("unsupported_algorithm")
        // Client data
        public static let malformedClientData = Code("malformed_client_data")
        public static let clientDataTypeMismatch = Code("client_data_type_mismatch")
        public static let challengeMismatch = Code("challenge_mismatch")
        public static let originMismatch = Code("origin_mismatch")
        public static let crossOriginNotAllowed = Code("cross_origin_not_allowed")
        public static let topOriginMismatch = Code("top_origin_mismatch")
        // Authenticator data
        public static let malformedAuthenticatorData = Code("malformed_authenticator_data")
        public static let rpIDHashMismatch = Code("rp_id_hash_mismatch")
        public static let userPresenceRequired = Code("user_presence_required")
        public static let userVerificationRequired = Code("user_verification_required")
        public static let backupStateWithoutEligibility = Code("backup_state_without_eligibility")
        public static let backupEligibilityChanged = Code("backup_eligibility_changed")
        public static let algorithmNotAllowed = Code("algorithm_not_allowed")
        public static let credentialIDTooLong = Code("credential_id_too_long")
        public static let credentialIDMismatch = Code("credential_id_mismatch")
        public static let credentialNotAllowed = Code("credential_not_allowed")
        public static let userHandleMismatch = Code("user_handle_mismatch")
        public static let userHandleMissing = Code("user_handle_missing")
        public static let invalidCredentialType = Code("invalid_credential_type")
        // Attestation
        public static let malformedAttestationObject = Code("malformed_attestation_object")
        public static let unsupportedAttestationFormat = Code("unsupported_attestation_format")
        public static let malformedAttestationStatement = Code("malformed_attestation_statement")
        public static let invalidAttestationSignature = Code("invalid_attestation_signature")
        public static let invalidAttestationCertificate = Code("invalid_attestation_certificate")
        public static let untrustedAttestation = Code("untrusted_attestation")
        /// The key an attestation vouches for (TPM pubArea, credential certificate) is not the credential key.
        public static let attestationKeyMismatch = Code("attestation_key_mismatch")
        /// The value an attestation binds to the ceremony (TPM extraData, Android attestationChallenge,
        /// SafetyNet or Apple nonce) is not the one this ceremony computes.
        public static let attestationNonceMismatch = Code("attestation_nonce_mismatch")
        /// A TPM certInfo (TPMS_ATTEST) is not a certification of this pubArea by a TPM.
        public static let invalidTPMCertInfo = Code("invalid_tpm_cert_info")
        /// An Android key's authorization lists allow all applications, or lack generated origin or sign purpose.
        public static let invalidAndroidKeyAuthorization = Code("invalid_android_key_authorization")
        /// A SafetyNet response does not report `ctsProfileMatch: true`.
        public static let safetyNetCTSProfileMismatch = Code("safetynet_cts_profile_mismatch")
        /// A SafetyNet response's `timestampMs` lies outside the window around the ceremony time.
        public static let safetyNetTimestampOutOfRange = Code("safetynet_timestamp_out_of_range")
        // FIDO metadata (MDS3)
        /// A metadata BLOB is not a JWS with an `x5c` chain, or its payload or an entry is not what MDS3 specifies.
        public static let metadataMalformed = Code("metadata_malformed")
        /// A metadata BLOB's signature does not verify with its signing certificate, or its `alg` is not RS256/ES256.
        public static let metadataInvalidSignature = Code("metadata_invalid_signature")
        /// A metadata BLOB's `x5c` chain does not validate to the configured root at the given time.
        public static let metadataUntrustedChain = Code("metadata_untrusted_chain")
        /// A metadata BLOB's `nextUpdate` day has passed: it is stale.
        public static let metadataExpired = Code("metadata_expired")
        /// A status report carries a `status` that is not an MDS3 `AuthenticatorStatus`.
        public static let metadataUnknownStatus = Code("metadata_unknown_status")
        /// The authenticator's latest status report is `REVOKED`.
        public static let authenticatorRevoked = Code("authenticator_revoked")
        /// The authenticator's latest status report is `USER_VERIFICATION_BYPASS`.
        public static let authenticatorUserVerificationBypass = Code("authenticator_user_verification_bypass")
        /// The authenticator's latest status report is `ATTESTATION_KEY_COMPROMISE`.
        public static let authenticatorAttestationKeyCompromise = Code("authenticator_attestation_key_compromise")
        /// The authenticator's latest status report is `USER_KEY_REMOTE_COMPROMISE`.
        public static let authenticatorUserKeyRemoteCompromise = Code("authenticator_user_key_remote_compromise")
        /// The authenticator's latest status report is `USER_KEY_PHYSICAL_COMPROMISE`.
        public static let authenticatorUserKeyPhysicalCompromise = Code("authenticator_user_key_physical_compromise")
        // Assertion
        public static let invalidSignature = Code("invalid_signature")
        public static let signCountRegression = Code("sign_count_regression")
    }

    /// Which check failed.
    public let code: Code
    /// The spec step and context of the failure; for logs and debugging, never for clients.
    public let detail: String

    /// Creates an error for a failed check.
    /// - Parameters:
    ///   - code: the stable code of the check.
    ///   - detail: the spec step and what was wrong, for example "§7.1 step 13: rpIdHash mismatch".
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "WebAuthnError(\(code))" }
    public var debugDescription: String { "WebAuthnError(\(code)): \(detail)" }

    public static func == (lhs: WebAuthnError, rhs: WebAuthnError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension WebAuthnError {
    /// An error with this code and no detail, for matching in `catch` and tests.
    public static func code(_ code: Code) -> WebAuthnError { WebAuthnError(code, "") }
}
