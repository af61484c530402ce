// The test bundle's entry point, which scripts/test copies to Tests/XCTMain.swift for its builds (SwiftPM uses a
// `Tests/XCTMain.swift` as it is). Without one, SwiftPM on Linux generates the entry point after listing XCTest's
// tests from the compiler's index store, so every build must write that store: about a fifth of its compile time.
// The suite has Swift Testing tests only, which that library finds at run time (docs/testing.md "No index store").
// XCTest gets an empty list, so that it still answers `swift test`'s questions (`--dump-tests-json`).
import Testing
import XCTest

@main struct TestEntryPoint {
    static func main() async {
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "--testing-library"), index + 1 < arguments.count,
            arguments[index + 1].lowercased() == "swift-testing"
        {
            await Testing.__swiftPMEntryPoint() as Never
        }
        XCTMain([]) as Never
    }
}
