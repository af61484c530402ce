import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ctxbus

struct SortArgumentTests {
    @Test func minusMeansDescendingAndCommasSeparateKeys() throws {
        let descriptors = try SortArgument.descriptors(["-time,characteristic", "+device.name"])
        expectEqual(
            descriptors,
            [
                ObjectSortDescriptor("time", ascending: false), ObjectSortDescriptor("characteristic"),
                ObjectSortDescriptor("device.name"),
            ])
    }

    @Test(arguments: ["", "-", "a,,b", "device..name", "time."])
    func rejectsEmptyKeys(word: String) {
        #expect(throws: UsageError.self) { try SortArgument.descriptors([word]) }
    }
}
