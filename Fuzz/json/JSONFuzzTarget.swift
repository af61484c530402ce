import ContextBusSupport

// Fuzz target `json`: JSONParser on arbitrary bytes, and JSONWriter on what it accepts.
//
// Properties:
// - parsing never crashes; an error's offset lies within the input (at its end for
//   `unexpectedEndOfInput`);
// - the byte-collection, raw-buffer, non-contiguous and string entry points agree;
// - a document accepted with duplicate keys rejected is accepted equal with them allowed, and
//   any other rejection is the same with them allowed; a document accepted under a small depth
//   limit is accepted equal under the default one;
// - an accepted document written by `JSONWriter` (sorted keys or not) parses back equal; with
//   sorted keys, writing that again gives the same bytes (unsorted, member order follows the
//   dictionary's storage, which two equal dictionaries need not share).

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let parser = JSONParser()
    let strict = Result { () throws(JSONParseError) in try parser.parse(bytes) }

    let raw = bytes.withUnsafeBytes { buffer in Result { () throws(JSONParseError) in try parser.parse(buffer) } }
    fuzzCheck(raw == strict, "raw-buffer parse \(raw) differs from \(strict)")
    let lazy = Result { () throws(JSONParseError) in try parser.parse(bytes.lazy.map { $0 }) }
    fuzzCheck(lazy == strict, "non-contiguous parse \(lazy) differs from \(strict)")
    if let text = String(validating: bytes, as: UTF8.self) {
        let fromString = Result { () throws(JSONParseError) in try parser.parse(text) }
        fuzzCheck(fromString == strict, "string parse \(fromString) differs from \(strict)")
    }

    let lax = Result { () throws(JSONParseError) in try JSONParser(rejectsDuplicateKeys: false).parse(bytes) }
    let shallow = Result { () throws(JSONParseError) in try JSONParser(maximumDepth: 3).parse(bytes) }
    switch strict {
    case .failure(let error):
        fuzzCheck(error.offset >= 0 && error.offset <= bytes.count, "offset \(error.offset) outside the input")
        if error.reason == .unexpectedEndOfInput {
            fuzzCheck(error.offset == bytes.count, "end of input reported at \(error.offset) of \(bytes.count)")
        }
        if case .duplicateKey = error.reason {
        } else {
            fuzzCheck(lax == strict, "with duplicates allowed: \(lax), strict: \(error)")
        }
        fuzzCheck((try? shallow.get()) == nil, "a shallow parser accepted what the default one rejected")
        _ = error.description
    case .success(let value):
        fuzzCheck(lax == strict, "with duplicates allowed: \(lax), strict: \(value)")
        if case .success(let shallowValue) = shallow {
            fuzzCheck(shallowValue == value, "a shallow parser read \(shallowValue), the default one \(value)")
        }
        checkWriting(value, JSONWriter())
        checkWriting(value, JSONWriter(sortsKeys: true))
    }
    return 0
}

private func checkWriting(_ value: JSONValue, _ writer: JSONWriter) {
    do {
        let written = try writer.bytes(value)
        let again = try JSONParser().parse(written)
        fuzzCheck(again == value, "\(value) was written as \(String(decoding: written, as: UTF8.self)), read \(again)")
        if writer.sortsKeys {
            fuzzCheck(try writer.bytes(again) == written, "sorted writing is not stable for \(value)")
        }
        fuzzCheck(try writer.string(value) == String(decoding: written, as: UTF8.self), "string(_:) differs")
    } catch {
        fuzzCheck(false, "an accepted document cannot be written back: \(error)")
    }
}
