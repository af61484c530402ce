import Foundation
import TestSupport
import Testing

struct StoreServiceHelpTests {
    @Test func helpDocumentsTheFlags() throws {
        let output = try runProduct("storesvc", arguments: ["--help"])
        expectEqual(output.status, 0)
        expectTrue(output.standardOutput.contains("--socket"))
    }
}
