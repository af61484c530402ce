import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusServer
@testable import ContextBusSupport

struct ServiceLogTests {
    static let time = Date(timeIntervalSince1970: 1_767_225_600.25)

    @Test(arguments: LogLevel.allCases)
    func aJSONLineIsOneObjectWithTheDocumentedMembers(level: LogLevel) throws {
        let log = ServiceLog(program: "storesvc", level: .debug, format: .json, hasPriorityPrefix: false)
        let line = log.line(
            level, "serving \"x\"\nnext", fields: ["txn": .int(12), "socket": .string("/run/ctxbus/store.sock")],
            at: Self.time)
        expectFalse(line.contains("\n"), "one line")
        let object = try JSONParser().parse(Array(line.utf8))
        expectEqual(object["time"], .string("2026-01-01T00:00:00.250Z"))
        expectEqual(object["level"], .string(level.rawValue))
        expectEqual(object["service"], .string("storesvc"))
        expectEqual(object["message"], .string("serving \"x\"\nnext"))
        expectEqual(object["txn"], .int(12))
        expectEqual(object["socket"], .string("/run/ctxbus/store.sock"))
        expectEqual(object.objectValue?.count, 6)
    }

    @Test func aFieldNeverReplacesAStandardMember() throws {
        let log = ServiceLog(program: "devicesvc", level: .info, format: .json, hasPriorityPrefix: false)
        let object = try JSONParser().parse(
            Array(log.line(.info, "hello", fields: ["level": .string("fake"), "service": .int(1)]).utf8))
        expectEqual(object["level"], .string("info"))
        expectEqual(object["service"], .string("devicesvc"))
    }

    @Test func textLinesKeepTheirFormAndAddFields() {
        let log = ServiceLog(program: "storesvc", level: .info, hasPriorityPrefix: false)
        expectEqual(log.line(.warning, "stopping"), "storesvc: warning: stopping")
        expectEqual(
            log.line(.info, "backup", fields: ["path": .string("/a b"), "txn": .int(3)]),
            #"storesvc: info: backup path="/a b" txn=3"#)
    }

    @Test(arguments: [(LogLevel.error, "<3>"), (.warning, "<4>"), (.info, "<6>"), (.debug, "<7>")])
    func onTheJournalEachLineStartsWithItsSyslogPriority(level: LogLevel, prefix: String) throws {
        let text = ServiceLog(program: "storesvc", level: .debug, hasPriorityPrefix: true)
        expectEqual(text.line(level, "x"), "\(prefix)storesvc: \(level.rawValue): x")
        let json = ServiceLog(program: "storesvc", level: .debug, format: .json, hasPriorityPrefix: true)
        let line = json.line(level, "x")
        expectTrue(line.hasPrefix(prefix + "{"), "\(line)")
        _ = try JSONParser().parse(Array(line.dropFirst(prefix.count).utf8))
    }

    @Test func standardErrorIsTheJournalOnlyWhenJournalStreamNamesIt() {
        var status = stat()
        expectEqual(fstat(2, &status), 0)
        let own = "\(status.st_dev):\(status.st_ino)"
        expectTrue(ServiceLog.isJournal(environment: ["JOURNAL_STREAM": own]))
        expectFalse(ServiceLog.isJournal(environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino + 1)"]))
        expectFalse(ServiceLog.isJournal(environment: ["JOURNAL_STREAM": "garbage"]))
        expectFalse(ServiceLog.isJournal(environment: [:]))
    }
}
