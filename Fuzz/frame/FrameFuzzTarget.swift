import ContextBusTransport

// Fuzz target `frame`: FrameDecoder over a byte stream cut into reads at random points.
//
// Input: byte 0 picks the decoder's maximum length, the rest is the stream. The cut points
// come from a generator seeded with the whole input. Properties:
// - the decoder never crashes, and gives the frames and the error a one-pass reference
//   decoder gives for the whole stream, however the stream was cut;
// - `bufferedByteCount` is what was appended and not returned;
// - `finish()` reports exactly the bytes left over;
// - the frames re-encode (`Frame.encode`, `FrameEncoder`) to the stream's bytes.

private let limits = [Frame.defaultMaximumLength, 0, 1, 16, 255, 4096]

/// What decoding the whole stream at once must give.
private struct Expected {
    var frames: [[UInt8]] = []
    var error: FrameError?
    /// Bytes of the stream that belong to returned frames.
    var consumed = 0

    init(stream: [UInt8], limit: Int) {
        while stream.count - consumed >= 4 {
            let length = stream[consumed..<consumed + 4].reduce(0) { $0 << 8 | Int($1) }
            if length == 0 {
                error = .emptyFrame
                return
            }
            if length > limit {
                error = .frameTooLarge(length: length, limit: limit)
                return
            }
            guard stream.count - consumed - 4 >= length else { return }
            frames.append(Array(stream[consumed + 4..<consumed + 4 + length]))
            consumed += 4 + length
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func frameFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzBytes(data, size)
    guard let selector = input.first else { return 0 }
    let limit = limits[Int(selector) % limits.count]
    let stream = Array(input.dropFirst())
    let expected = Expected(stream: stream, limit: limit)

    var random = FuzzRandom(hashing: input)
    var decoder = FrameDecoder(maximumLength: limit)
    var frames: [[UInt8]] = []
    var error: FrameError?
    var appended = 0
    var returned = 0
    while appended < stream.count || appended == 0 {
        let remaining = stream.count - appended
        let length = random.below(8) == 0 ? random.below(remaining + 1) : min(remaining, random.below(6))
        let chunk = stream[appended..<appended + length]
        if random.below(2) == 0 {
            decoder.append(chunk)
        } else {
            Array(chunk).withUnsafeBytes { decoder.append($0) }
        }
        appended += length
        do {
            while let frame = try decoder.nextFrame() {
                frames.append(frame)
                returned += 4 + frame.count
            }
            fuzzCheck(
                decoder.bufferedByteCount == appended - returned,
                "bufferedByteCount \(decoder.bufferedByteCount), expected \(appended - returned)")
        } catch let thrown {
            if let error { fuzzCheck(thrown == error, "the error changed from \(error) to \(thrown)") }
            error = thrown
            fuzzCheck(decoder.failure == thrown, "failure \(String(describing: decoder.failure)) != \(thrown)")
        }
        if stream.isEmpty { break }
    }
    fuzzCheck(frames == expected.frames, "decoded \(frames.count) frames, expected \(expected.frames.count)")
    fuzzCheck(
        error == expected.error, "error \(String(describing: error)), expected \(String(describing: expected.error))")

    do {
        try decoder.finish()
        fuzzCheck(
            error == nil && returned == stream.count, "finish() passed with \(stream.count - returned) bytes left")
    } catch let thrown {
        if let error {
            fuzzCheck(thrown == error, "finish() threw \(thrown) after \(error)")
        } else {
            let leftover = stream.count - returned
            let announced =
                leftover >= 4 ? stream[returned..<returned + 4].reduce(0) { $0 << 8 | Int($1) } : nil
            fuzzCheck(
                thrown == .truncatedFrame(bufferedBytes: leftover, expectedLength: announced),
                "finish() threw \(thrown) with \(leftover) bytes left")
        }
        _ = thrown.description
    }

    var reencoded: [UInt8] = []
    for frame in frames {
        let encoded = Frame.encode(payload: frame)
        do {
            let limited = try FrameEncoder(maximumLength: limit).encode(payload: frame)
            fuzzCheck(limited == encoded, "FrameEncoder and Frame.encode disagree")
        } catch {
            fuzzCheck(false, "FrameEncoder refused a frame the decoder accepted: \(error)")
        }
        reencoded += encoded
    }
    fuzzCheck(reencoded[...] == stream[..<expected.consumed], "frames do not re-encode to the stream's bytes")
    return 0
}
