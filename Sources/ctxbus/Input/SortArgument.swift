import ContextBusObjectGraph

/// `--sort` values: a key path, `-` in front for descending (`-time`), `+` or nothing for
/// ascending; several keys in one word separated by commas (`-time,characteristic`).
enum SortArgument {
    /// Reads every `--sort` word into sort descriptors, in order.
    ///
    /// - Throws: `UsageError` for an empty key or an empty key path segment (`device..name`).
    static func descriptors(_ words: [String]) throws(UsageError) -> [ObjectSortDescriptor] {
        var descriptors: [ObjectSortDescriptor] = []
        for word in words {
            for part in word.split(separator: ",", omittingEmptySubsequences: false) {
                var key = Substring(part)
                var ascending = true
                if key.first == "-" {
                    ascending = false
                    key = key.dropFirst()
                } else if key.first == "+" {
                    key = key.dropFirst()
                }
                guard !key.isEmpty, !key.split(separator: ".", omittingEmptySubsequences: false).contains("") else {
                    throw .invalidValue(word, for: "sort", expected: "a key path like time, -time or device.name")
                }
                descriptors.append(ObjectSortDescriptor(String(key), ascending: ascending))
            }
        }
        return descriptors
    }
}
