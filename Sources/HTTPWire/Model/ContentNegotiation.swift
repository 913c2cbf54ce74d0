extension Request {
    /// Which of `offered` (media types such as `application/json`, most preferred first) the `Accept` header
    /// asks for (RFC 9110 §12.5.1): the one with the highest weight, the earlier on a tie; the first when
    /// there is no `Accept` or when it names none of them, so a client that asks for something we cannot
    /// write still gets an answer rather than a 406.
    public func preferredMediaType(among offered: [String]) -> String {
        let ranges = headers.values(for: "Accept").flatMap { $0.split(separator: ",") }.compactMap(MediaRange.init)
        guard !ranges.isEmpty else { return offered[0] }
        var best = offered[0]
        var bestWeight = -1.0
        for type in offered {
            let weight = MediaRange.weight(of: type, in: ranges)
            if weight > bestWeight { (best, bestWeight) = (type, weight) }
        }
        return bestWeight > 0 ? best : offered[0]
    }
}

/// One element of `Accept`: `type/subtype`, `type/*` or `*/*`, with its weight `q` (RFC 9110 §12.4.2).
package struct MediaRange: Equatable {
    package var type: Substring
    package var subtype: Substring
    package var weight: Double

    package init?(_ element: Substring) {
        let parts = element.split(separator: ";").map { $0.trimmingASCIIWhitespace() }
        guard let range = parts.first, let slash = range.firstIndex(of: "/") else { return nil }
        type = range[..<slash].lowercased()[...]
        subtype = range[range.index(after: slash)...].lowercased()[...]
        weight = 1
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingASCIIWhitespace() }
            // A malformed weight makes the whole range unusable rather than a guess.
            if pair.count == 2, pair[0].lowercased() == "q" {
                guard let value = Double(pair[1]), (0...1).contains(value) else { return nil }
                weight = value
            }
        }
        guard !type.isEmpty, !subtype.isEmpty else { return nil }
    }

    /// How much `ranges` want `mediaType`: the weight of the most specific range that matches it, 0 when none does.
    package static func weight(of mediaType: String, in ranges: [MediaRange]) -> Double {
        let parts = mediaType.lowercased().split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return 0 }
        var best: (specificity: Int, weight: Double) = (-1, 0)
        for range in ranges {
            let specificity: Int
            if range.type == parts[0] && range.subtype == parts[1] {
                specificity = 2
            } else if range.type == parts[0] && range.subtype == "*" {
                specificity = 1
            } else if range.type == "*" && range.subtype == "*" {
                specificity = 0
            } else {
                continue
            }
            if specificity > best.specificity { best = (specificity, range.weight) }
        }
        return best.weight
    }
}
