import ContextBusCodeGeneration
import Foundation

// `ctxbus-entities MODEL.json --output FILE [--access public|internal]`: the tool the ContextBusEntities build-tool
// plugin runs on each `*.ctxmodel.json` file of a target. It writes what `ctxbus model swift` prints for the same
// model (one `EntityCodeGenerator`), without linking the bus: the plugin's build stays small.

let usage = "usage: ctxbus-entities MODEL.json --output FILE [--access public|internal]"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("ctxbus-entities: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var modelPath: String?
var outputPath: String?
var access = EntityCodeGenerator.Access.public
while !arguments.isEmpty {
    let word = arguments.removeFirst()
    switch word {
    case "--output":
        guard !arguments.isEmpty else { fail("--output needs a file\n\(usage)", status: 64) }
        outputPath = arguments.removeFirst()
    case "--access":
        guard !arguments.isEmpty, let value = EntityCodeGenerator.Access(rawValue: arguments.removeFirst()) else {
            fail("--access takes public or internal\n\(usage)", status: 64)
        }
        access = value
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        guard modelPath == nil, !word.hasPrefix("-") else { fail("unexpected argument \(word)\n\(usage)", status: 64) }
        modelPath = word
    }
}
guard let modelPath, let outputPath else { fail(usage, status: 64) }

do {
    let source = try EntityCodeGenerator(access: access).source(forModelAt: URL(fileURLWithPath: modelPath))
    try Data(source.utf8).write(to: URL(fileURLWithPath: outputPath), options: .atomic)
} catch let error as EntityCodeError {
    fail(error.description, status: 1)
} catch {
    fail("cannot write \(outputPath): \(error)", status: 1)
}
