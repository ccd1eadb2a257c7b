#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#if defined(__linux__)
#include <errno.h>
#include <sys/random.h>

/// Fills `buffer` with `count` bytes from the kernel's CSPRNG (`getrandom(2)` without flags: it blocks only until
/// the pool is first initialised at boot), again after a signal or a short read; 1 on success, 0 on failure. Not
/// OpenSSL, but the same source OpenSSL seeds its DRBG from, at about a quarter of `RAND_bytes`'s cost for a short
/// draw (OpenSSL 3.0's CTR-DRBG sets up AES on every call); Swift cannot call `getrandom` (nor variadic `syscall`).
static inline int copenssl_system_random(unsigned char *buffer, size_t count) {
    while (count > 0) {
        ssize_t n = getrandom(buffer, count, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        buffer += n;
        count -= (size_t)n;
    }
    return 1;
}
#endif

/* ECDSA through the EC key's own method: OpenSSL 3.0 deprecates the EC_KEY API but keeps it, and it is the one way
 * to verify without the provider lookups that EVP_DigestVerifyInit repeats on every call (a signature algorithm
 * fetched by name, a key-management walk of the name map). The deprecation is silenced here only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/// A reference to the EC key inside `pkey` (NULL if it holds none); release it with `copenssl_ec_key_free`.
static inline EC_KEY *copenssl_ec_key_get1(EVP_PKEY *pkey) { return EVP_PKEY_get1_EC_KEY(pkey); }
static inline void copenssl_ec_key_free(EC_KEY *key) { EC_KEY_free(key); }
/// `ECDSA_verify`: 1 for a valid DER signature over `digest`, 0 for an invalid one, -1 on error. It refuses a
/// signature that is not the exact DER encoding of its values (trailing or non-minimal bytes), as EVP does.
static inline int copenssl_ecdsa_verify(const unsigned char *digest, int digest_length, const unsigned char *signature,
                                        int signature_length, EC_KEY *key) {
    return ECDSA_verify(0, digest, digest_length, signature, signature_length, key);
}
/* One-shot SHA digests over a context on the stack: the deprecated low-level functions are the only ones in OpenSSL
 * 3.0 that neither allocate a context nor look anything up (EVP_Digest allocates two contexts, SHA256() fetches the
 * digest by name); about a third of EVP_Digest's cost for the short inputs a ceremony hashes. */
static inline void copenssl_sha1(const void *data, size_t count, unsigned char *out) {
    SHA_CTX context; SHA1_Init(&context); SHA1_Update(&context, data, count); SHA1_Final(out, &context);
}
static inline void copenssl_sha256(const void *data, size_t count, unsigned char *out) {
    SHA256_CTX context; SHA256_Init(&context); SHA256_Update(&context, data, count); SHA256_Final(out, &context);
}
static inline void copenssl_sha384(const void *data, size_t count, unsigned char *out) {
    SHA512_CTX context; SHA384_Init(&context); SHA384_Update(&context, data, count); SHA384_Final(out, &context);
}
static inline void copenssl_sha512(const void *data, size_t count, unsigned char *out) {
    SHA512_CTX context; SHA512_Init(&context); SHA512_Update(&context, data, count); SHA512_Final(out, &context);
}
#pragma GCC diagnostic pop

/// `OPENSSL_free` is a macro; Swift needs a function.
static inline void copenssl_free(void *p) { OPENSSL_free(p); }

/// `EVP_PKEY_PUBLIC_KEY` is a composite macro; Swift needs a function.
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
/// `EVP_PKEY_KEY_PARAMETERS` is a composite macro; Swift needs a function.
static inline int copenssl_selection_key_parameters(void) { return EVP_PKEY_KEY_PARAMETERS; }

/// Parameter keys and algorithm names as static C strings. OSSL_PARAM arrays and EVP_PKEY_CTX keep these
/// pointers, so a temporary C string bridged from a Swift String would dangle.
static inline const char *copenssl_param_group_name(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *copenssl_param_pub_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *copenssl_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *copenssl_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *copenssl_param_ec_pub_x(void) { return OSSL_PKEY_PARAM_EC_PUB_X; }
static inline const char *copenssl_param_ec_pub_y(void) { return OSSL_PKEY_PARAM_EC_PUB_Y; }
static inline const char *copenssl_name_ec(void) { return "EC"; }
static inline const char *copenssl_name_rsa(void) { return "RSA"; }
static inline const char *copenssl_name_ed25519(void) { return "ED25519"; }
static inline const char *copenssl_group_p256(void) { return "P-256"; }
static inline const char *copenssl_group_p384(void) { return "P-384"; }
static inline const char *copenssl_group_p521(void) { return "P-521"; }

/// scrypt KDF parameter names (EVP_KDF "SCRYPT"), as static C strings for OSSL_PARAM arrays.
static inline const char *copenssl_kdf_name_scrypt(void) { return OSSL_KDF_NAME_SCRYPT; }
static inline const char *copenssl_kdf_param_password(void) { return OSSL_KDF_PARAM_PASSWORD; }
static inline const char *copenssl_kdf_param_salt(void) { return OSSL_KDF_PARAM_SALT; }
static inline const char *copenssl_kdf_param_scrypt_n(void) { return OSSL_KDF_PARAM_SCRYPT_N; }
static inline const char *copenssl_kdf_param_scrypt_r(void) { return OSSL_KDF_PARAM_SCRYPT_R; }
static inline const char *copenssl_kdf_param_scrypt_p(void) { return OSSL_KDF_PARAM_SCRYPT_P; }
static inline const char *copenssl_kdf_param_scrypt_maxmem(void) { return OSSL_KDF_PARAM_SCRYPT_MAXMEM; }

/// `sk_X509_*` are type-safe macros over `OPENSSL_sk_*`; Swift needs functions.
static inline STACK_OF(X509) *copenssl_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int copenssl_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
/// Frees the stack only; the certificates stay owned by their Swift wrappers.
static inline void copenssl_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }

/// A TLS client context: TLS 1.2 or later, the server's certificate chain verified (`SSL_VERIFY_PEER`) against the
/// PEM roots in `roots_file`, or OpenSSL's default locations when it is NULL (which honour `SSL_CERT_FILE` and
/// `SSL_CERT_DIR`); no renegotiation, no compression; a peer that closes without close_notify reads as a clean end
/// (bodies are only drained, never trusted for their length). NULL if OpenSSL fails or the roots do not load. Several
/// of these calls are macros, so the whole configuration is one C function.
static inline SSL_CTX *copenssl_tls_client_context(const char *roots_file) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) return NULL;
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    int loaded = roots_file != NULL ? SSL_CTX_load_verify_locations(ctx, roots_file, NULL)
                                    : SSL_CTX_set_default_verify_paths(ctx);
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || loaded != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/// `SSL_set_tlsext_host_name` is a macro over `SSL_ctrl`; Swift needs a function.
static inline int copenssl_ssl_set_server_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }

#endif
