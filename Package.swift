// swift-tools-version: 6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (the default for tools 6.0) plus explicit `any`.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Sesame",
    // Apple platforms matter only to SesameClient (Synchronization's Mutex needs these versions); Linux is the server's.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "sesame", targets: ["sesame"]),
        .library(name: "WebAuthn", targets: ["WebAuthn"]),
        .library(name: "SesameCrypto", targets: ["SesameCrypto"]),
        .library(name: "SesameClient", targets: ["SesameClient"]),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // C helpers for variadic calls that Swift cannot make.
        .target(name: "CSesameShims", dependencies: ["CMicroHTTPD"]),

        .target(name: "SesameCrypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .target(name: "WebAuthn", dependencies: ["SesameCrypto"], swiftSettings: swiftSettings),
        .target(
            name: "SesameHTTP", dependencies: ["CMicroHTTPD", "CSesameShims", "SesameCrypto"], swiftSettings: swiftSettings
        ),
        .target(name: "SesameStore", dependencies: ["CSQLite", "CLibPQ"], swiftSettings: swiftSettings),
        .target(
            name: "SesameCore", dependencies: ["WebAuthn", "SesameCrypto", "SesameStore"], swiftSettings: swiftSettings
        ),
        // One module per wire API ("face"): translation only, and no face imports another.
        .target(name: "AppwriteAPI", dependencies: ["SesameCore", "SesameHTTP", "WebAuthn"], swiftSettings: swiftSettings),
        .target(name: "BotShieldAPI", dependencies: ["SesameCore", "SesameHTTP", "WebAuthn", "SesameCrypto"], swiftSettings: swiftSettings),
        .target(name: "AuthsignalAPI", dependencies: ["SesameCore", "SesameHTTP", "WebAuthn"], swiftSettings: swiftSettings),
        .target(
            name: "SesameServer",
            dependencies: ["SesameCore", "SesameHTTP", "SesameStore", "WebAuthn", "SesameCrypto", "AppwriteAPI", "BotShieldAPI", "AuthsignalAPI"],
            // Assets: the web face's files (browser SDK, demo page), served as they are, no build step.
            resources: [.copy("openapi.json"), .copy("Assets")], swiftSettings: swiftSettings
        ),
        // The Swift SDK: never depends on server modules; on Apple platforms it uses CryptoKit instead of OpenSSL.
        .target(
            name: "SesameClient",
            dependencies: [.target(name: "SesameCrypto", condition: .when(platforms: [.linux]))],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SesameTestSupport", dependencies: ["WebAuthn", "SesameCrypto", "SesameHTTP", "COpenSSL"], exclude: ["Data"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "sesame", dependencies: ["WebAuthn", "SesameCrypto", "SesameCore", "SesameServer", "SesameHTTP", "SesameStore", "CSesameShims"],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "sesame-bench", dependencies: ["WebAuthn", "SesameCrypto", "SesameTestSupport", "COpenSSL"],
            path: "Benchmarks/SesameBench", swiftSettings: swiftSettings
        ),

        // The app side of inline verification with a software passkey, for the README's walk-through.
        .executableTarget(name: "sesame-inline-demo", dependencies: ["SesameClient"], path: "Examples/InlineDemo", swiftSettings: swiftSettings),

        .executableTarget(
            name: "sesame-ceremony-bench", dependencies: ["SesameClient", "SesameCrypto", "SesameTestSupport"],
            path: "Benchmarks/CeremonyBench", swiftSettings: swiftSettings
        ),

        // Hostile requests through the router into every documented route (make test, make fuzz; Fuzz/README.md).
        .executableTarget(
            name: "sesame-face-fuzz", dependencies: ["SesameServer", "SesameCore", "SesameHTTP", "SesameStore", "SesameClient"],
            path: "Fuzz/FaceFuzz", swiftSettings: swiftSettings
        ),

        .testTarget(name: "SesameCryptoTests", dependencies: ["SesameCrypto", "SesameTestSupport"], exclude: ["Data"], swiftSettings: swiftSettings),
        .testTarget(
            name: "WebAuthnTests",
            dependencies: ["WebAuthn", "SesameCrypto", "SesameTestSupport"],
            exclude: ["Vectors"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SesameHTTPTests", dependencies: ["SesameHTTP"], swiftSettings: swiftSettings),
        .testTarget(name: "SesameStoreTests", dependencies: ["SesameStore", "SesameTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SesameCoreTests", dependencies: ["SesameCore", "SesameStore", "WebAuthn", "SesameTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SesameServerTests", dependencies: ["SesameServer", "SesameCore", "SesameHTTP", "SesameStore", "SesameTestSupport", "SesameCrypto"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppwriteAPITests",
            dependencies: [
                "AppwriteAPI", "SesameServer", "SesameCore", "SesameHTTP", "SesameStore", "SesameTestSupport", "SesameClient",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BotShieldAPITests",
            dependencies: [
                "BotShieldAPI", "SesameServer", "SesameCore", "SesameHTTP", "SesameStore", "SesameTestSupport", "SesameClient",
                "SesameCrypto", "WebAuthn",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AuthsignalAPITests",
            dependencies: ["AuthsignalAPI", "SesameServer", "SesameCore", "SesameHTTP", "SesameStore", "SesameTestSupport", "SesameClient", "WebAuthn"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SesameClientTests", dependencies: ["SesameClient", "WebAuthn", "SesameCrypto"], swiftSettings: swiftSettings),
        .testTarget(name: "SesameCLITests", dependencies: ["sesame", "WebAuthn", "SesameCrypto", "SesameTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SesameIntegrationTests",
            dependencies: ["sesame", "SesameTestSupport", "SesameStore", "SesameCrypto", "SesameCore", "SesameClient"],
            swiftSettings: swiftSettings
        ),
    ]
)
