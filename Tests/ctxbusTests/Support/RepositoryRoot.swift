import Foundation

/// The repository root (this file is `Tests/ctxbusTests/Support/ChildProcess.swift`).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
