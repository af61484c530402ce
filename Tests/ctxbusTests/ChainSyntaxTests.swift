import Foundation
import TestSupport
import Testing

@testable import ContextBusWire
@testable import ctxbus

struct ChainSyntaxTests {
    static let battery = BluetoothUUID("2a19")!

    @Test func readsEveryKindOfStep() throws {
        let long = "c0defeed-0001-4000-8000-000000000000"
        let steps = try ChainSyntax.parse([
            "connect", "read:2a19", "write:2a06=01", "write-command:\(long)=0x0A0b", "notify:2a19x3", "wait:500",
            "disconnect",
        ])
        expectEqual(
            steps,
            [
                .connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: nil),
                .write(characteristic: BluetoothUUID("2a06")!, value: Data([1]), response: true, timeoutMs: nil),
                .write(characteristic: BluetoothUUID(long)!, value: Data([10, 11]), response: false, timeoutMs: nil),
                .notify(characteristic: Self.battery, count: 3, timeoutMs: nil), .wait(ms: 500), .disconnect,
            ])
    }

    @Test func readsTimeoutsAfterAnAtSign() throws {
        let steps = try ChainSyntax.parse(["connect@10000", "read:2a19@200", "notify:2a19x2@5000", "write:2a06=ff@9"])
        expectEqual(steps[0], .connect(timeoutMs: 10000))
        expectEqual(steps[1], .read(characteristic: Self.battery, timeoutMs: 200))
        expectEqual(steps[2], .notify(characteristic: Self.battery, count: 2, timeoutMs: 5000))
        expectEqual(
            steps[3], .write(characteristic: BluetoothUUID("2a06")!, value: Data([255]), response: true, timeoutMs: 9))
    }

    @Test func notifyWithoutACountCollectsOneNotification() throws {
        expectEqual(
            try ChainSyntax.parse(["notify:2a19"]), [.notify(characteristic: Self.battery, count: 1, timeoutMs: nil)])
    }

    @Test(arguments: [
        ("write:2a06=0g", 12, "'g' is not a hexadecimal digit"),
        ("write:2a06=012", 14, "expected two hex digits per byte (an even number)"),
        ("write:2a06", 10, "expected '=HEX' (the bytes to write) after the UUID"),
        ("read:2a1", 5, "expected a 16-bit UUID"),
        ("read:", 5, "'read' needs ':' and a UUID"),
        ("notify:2a19x0", 12, "expected a notification count after 'x' (an integer of at least 1)"),
        ("wait:soon", 5, "expected milliseconds after 'wait:'"),
        ("connect@0", 8, "expected a timeout in milliseconds after '@' (an integer of at least 1)"),
        ("connect:now", 7, "'connect' takes no ':' argument"),
        ("jump", 0, "unknown step 'jump'"),
    ])
    func pointsAtTheBadCharacterOfABadStep(word: String, offset: Int, reason: String) {
        do {
            _ = try ChainSyntax.parse(["connect", word, "disconnect"])
            Issue.record("\(word) was accepted")
        } catch {
            expectEqual(error.index, 1)
            expectEqual(error.word, word)
            expectEqual(error.offset, offset)
            expectTrue(error.reason.hasPrefix(reason), "\(error.reason)")
        }
    }

    @Test func drawsACaretUnderTheBadCharacterOfTheWholeChain() {
        do {
            _ = try ChainSyntax.parse(["connect", "read:2a19", "write:2a06=0g", "disconnect"])
            Issue.record("accepted")
        } catch {
            expectEqual(error.description, "invalid chain step 3 'write:2a06=0g': 'g' is not a hexadecimal digit")
            expectEqual(
                error.pointer,
                [
                    "  connect read:2a19 write:2a06=0g disconnect",
                    "                                ^",
                ])
        }
    }

    @Test func everyKindOfStepHasASpelling() {
        for kind in ChainStep.kinds {
            expectTrue(kind is any ChainSyntaxStep.Type, "\(kind) is not a ChainSyntaxStep")
        }
    }

    @Test func writesStepsBackInTheSameSyntax() throws {
        let words = ["connect@5", "read:2a19", "write-command:2a06=0102", "notify:2a19x3@100", "wait:7", "disconnect"]
        try expectEqual(ChainSyntax.parse(words).map(ChainSyntax.text(of:)), words)
    }
}
