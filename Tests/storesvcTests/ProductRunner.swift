import Foundation

/// The result of running one of the package's executables.
struct ProductOutput {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// The directory holding the built products: the test bundle's own build directory.
func productsDirectory() -> URL {
    let bundle = Bundle.main.bundleURL
    // `swift test` runs `<build>/debug/ContextBusPackageTests.xctest`; the executables sit beside it.
    if bundle.pathExtension == "xctest" { return bundle.deletingLastPathComponent() }
    return bundle
}

/// Runs a built executable of this package and collects its output.
func runProduct(_ name: String, arguments: [String]) throws -> ProductOutput {
    let process = Process()
    process.executableURL = productsDirectory().appendingPathComponent(name)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProductOutput(
        status: process.terminationStatus,
        standardOutput: String(decoding: outData, as: UTF8.self),
        standardError: String(decoding: errData, as: UTF8.self))
}
