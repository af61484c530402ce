import TestSupport
import Testing

@testable import ContextBusTransport

struct UnixSocketAddressTests {
    @Test func acceptsAPathOfExactlyTheSunPathLimit() throws {
        let path = "/" + String(repeating: "a", count: UnixSocketAddress.maximumPathLength - 1)
        try expectEqual(UnixSocketAddress(path: path).path, path)
    }

    @Test func rejectsAPathOneByteTooLong() {
        let path = "/" + String(repeating: "a", count: UnixSocketAddress.maximumPathLength)
        #expect(throws: SocketAddressError.pathTooLong(path: path, length: 108, limit: 107)) {
            try UnixSocketAddress(path: path)
        }
    }

    @Test func countsTheLimitInUTF8Bytes() {
        // 54 two-byte characters: 108 bytes although only 55 characters.
        let path = "/" + String(repeating: "é", count: 54)
        #expect(throws: SocketAddressError.self) { try UnixSocketAddress(path: path) }
    }

    @Test func rejectsAnEmptyPath() {
        #expect(throws: SocketAddressError.emptyPath) { try UnixSocketAddress(path: "") }
    }

    @Test func rejectsAnAbstractNamespacePathWithNUL() {
        #expect(throws: SocketAddressError.containsNUL(path: "\0abstract")) {
            try UnixSocketAddress(path: "\0abstract")
        }
    }

    @Test func describesTheTooLongErrorInOneLine() {
        let error = SocketAddressError.pathTooLong(path: "/x", length: 200, limit: 107)
        expectEqual(error.description, "the Unix socket path /x is 200 bytes long; the limit is 107")
    }
}
