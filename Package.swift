// swift-tools-version: 6.0
// sitegen: a static site and report generator over SQLite and results controllers.
import PackageDescription

// Debian's libmimalloc-dev in place of glibc's malloc for the programs whose speed we measure: a build
// allocates millions of small strings, rows and contexts across threads, and mimalloc does it in a tenth
// fewer instructions (docs/decisions.md 18). Linked before libc, so the whole process uses it.
let mimalloc: [LinkerSetting] = [.linkedLibrary("mimalloc", .when(platforms: [.linux]))]

let package = Package(
    name: "sitegen",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "sitegen", targets: ["sitegen"]),
        .library(name: "ResultsController", targets: ["ResultsController"]),
        // The store's connection and changesets, which a controller's client opens and makes.
        .library(name: "SiteStore", targets: ["SiteStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // The local server's HTTP stack: Hummingbird 2's core on SwiftNIO (docs/decisions.md, 42).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Remote sources: feeds, record files and OPML lists over HTTP(S) (docs/decisions.md, 40).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // C boundaries: Debian's libsqlite3-dev and libcmark-gfm-dev / libcmark-gfm-extensions-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CCmarkGFM",
            pkgConfig: "libcmark-gfm",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]
        ),
        // libxml2's HTML parser (Debian's libxml2-dev), which the sanitizer of feed HTML parses with (decisions.md 40).
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // Linux system calls Glibc's module leaves out (renameat2's exchange).
        .systemLibrary(name: "CLinux"),
        // GNU source-highlight (Debian's libsource-highlight-dev), which colours fenced code: a C++ library,
        // so a small C++ target gives Swift a C face on it (decisions.md 41c). The bridge calls no boost::regex
        // itself: the library brings its own libboost_regex.
        .target(name: "CSourceHighlight", linkerSettings: [.linkedLibrary("source-highlight")]),

        // Pipeline stages, lowest first (DESIGN.md: left may import right, never the reverse).
        .target(name: "SiteStore", dependencies: ["CSQLite"]),
        .target(name: "ResultsController", dependencies: ["SiteStore"]),
        .target(name: "SiteSources", dependencies: ["Yams"]),
        .target(name: "SiteRender", dependencies: ["CCmarkGFM", "CLibXML2", "CSourceHighlight"]),
        // The HTTP(S) fetcher for remote sources: conditional GETs, redirects, caps, a limit per host.
        .target(name: "SiteFetch", dependencies: [
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        .target(name: "SiteBuild", dependencies: [
            "SiteStore", "ResultsController", "SiteSources", "SiteRender", "SiteFetch", "Yams", "CLinux",
        ]),
        // Development tools over a built site: rebuild on change (inotify), serve output/ with live reload.
        .target(name: "SiteWatch", dependencies: ["SiteBuild"]),
        .target(name: "SiteServe", dependencies: [
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "sitegen", dependencies: [
            "SiteBuild", "SiteStore", "SiteWatch", "SiteServe", "SiteFetch",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: mimalloc),

        // Release benchmarks (`swift run -c release ControllerBenchmark`); never timed unit tests.
        .executableTarget(name: "ControllerBenchmark", dependencies: ["ResultsController", "SiteStore"],
                          path: "Benchmarks/ControllerBenchmark"),

        .executableTarget(name: "LoadBenchmark", dependencies: ["SiteBuild", "SiteSources", "SiteStore"], path: "Benchmarks/LoadBenchmark"),
        // Template rendering, sitegen's engine against swift-mustache's (`swift run -c release TemplateBenchmark`).
        .executableTarget(name: "TemplateBenchmark", dependencies: ["SiteRender", .product(name: "Mustache", package: "swift-mustache")],
                          path: "Benchmarks/TemplateBenchmark"),
        // Markdown pages with fenced code, with and without server-side highlighting (decisions.md 41c).
        .executableTarget(name: "HighlightBenchmark", dependencies: ["SiteRender"], path: "Benchmarks/HighlightBenchmark"),
        // The physical floors of a full build (writing, SQLite, cmark-gfm) with nothing of sitegen's: scripts/bench-vs-hugo.
        .executableTarget(name: "FloorBenchmark", dependencies: ["CSQLite", "CCmarkGFM", "CLinux"], path: "Benchmarks/FloorBenchmark",
                          linkerSettings: mimalloc),

        // The source readers and the HTML sanitizer under libFuzzer (scripts/fuzz); a replay tool in a normal build.
        .executableTarget(name: "SourcesFuzzer", dependencies: ["SiteSources", "SiteRender"], path: "Fuzz/SourcesFuzzer"),

        // Helpers the test targets share (a seeded random generator; an HTTP server on 127.0.0.1 for remote
        // sources, FeedTestServer, on SwiftNIO).
        .target(name: "TestSupport", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ], path: "Tests/TestSupport"),
        .testTarget(name: "SiteStoreTests", dependencies: ["SiteStore", "TestSupport"]),
        .testTarget(name: "ResultsControllerTests", dependencies: ["ResultsController", "SiteStore", "TestSupport"]),
        .testTarget(name: "SiteSourcesTests", dependencies: ["SiteSources", "TestSupport"], resources: [.copy("Fixtures")]),
        // swift-mustache stays as the reference the template engine's differential test renders against.
        .testTarget(name: "SiteRenderTests", dependencies: [
            "SiteRender", "SiteSources", "TestSupport", .product(name: "Mustache", package: "swift-mustache"),
        ], resources: [.copy("Fixtures")]),
        .testTarget(name: "SiteBuildTests", dependencies: ["SiteBuild", "SiteStore", "SiteSources", "SiteRender", "SiteFetch", "TestSupport"]),
        .testTarget(name: "SiteWatchTests", dependencies: ["SiteWatch", "SiteServe", "SiteBuild", "SiteStore", "TestSupport"]),
    ]
)
