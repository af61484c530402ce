import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

/// `PredicateInput`'s limit on comparisons through relationships, at its boundary.
struct PredicateInputTests {
    func clauses(_ count: Int, _ clause: (Int) -> String) -> String {
        (0..<count).map(clause).joined(separator: " OR ")
    }

    @Test func twoHundredFiftySixComparisonsThroughRelationshipsAreAccepted() throws {
        let format = clauses(PredicateInput.maximumRelationshipComparisons) { "ANY readings.chain == 'c\($0)'" }
        expectNotNil(try PredicateInput.predicate(format))
    }

    @Test func oneMoreIsRefusedWithInvalidParamsOnWhere() {
        let format = clauses(PredicateInput.maximumRelationshipComparisons + 1) { "device.name == 'n\($0)'" }
        #expect {
            try PredicateInput.predicate(format)
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .invalidParams && error?.data?["field"] == .string("where")
                && error?.message.contains("257 comparisons through relationships") == true
        }
    }

    @Test func countsToOneKeyPathsToManyCountsAndQuantifiersButNotPlainKeys() throws {
        let predicate = try ContextBusObjectGraph.ObjectPredicate(
            format: "device.name == 'a' AND readings.@count > 1 AND ALL readings.chain == 'c' AND address == 'x'")
        expectEqual(PredicateInput.relationshipComparisons(in: predicate), 3)
    }

    @Test func tenThousandPlainComparisonsAreNotLimited() throws {
        expectNotNil(try PredicateInput.predicate(clauses(10_000) { "address == 'a\($0)'" }))
    }
}
