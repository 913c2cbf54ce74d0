@testable import HTTPWire

// The request head parser over arbitrary bytes, with the server's default limits and with tight ones
// that the fuzzer reaches without multi-kilobyte inputs.

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    for limits in RequestHeadTarget.limits {
        RequestHeadTarget(limits: limits).check(input)
    }
    return 0
}

struct RequestHeadTarget {
    static let limits = [Limits(), Limits(maxRequestLineBytes: 48, maxHeaderBytes: 96, maxBodyBytes: 100)]

    /// The statuses a framing fault may be answered with (docs/operations.md, Limits; 505 for a foreign HTTP version).
    static let framingStatuses: Set = [400, 413, 414, 431, 505]

    let limits: Limits

    func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult<RequestHead> {
        RequestParser(limits: limits).parseHead(bytes)
    }

    func parsePrefix(_ input: UnsafeRawBufferPointer, _ count: Int) -> ParseResult<RequestHead> {
        withExactCopy(of: UnsafeRawBufferPointer(rebasing: input[..<count])) { parse($0) }
    }

    func check(_ input: UnsafeRawBufferPointer) {
        switch parse(input) {
        case .incomplete:
            // Waiting for more is monotonic: fewer bytes of the same request are still "need more".
            if !input.isEmpty {
                invariant(isIncomplete(parsePrefix(input, input.count - 1)), "a prefix of an incomplete head is not incomplete: \(show(input))")
            }
        case .invalid(let problem):
            invariant(Self.framingStatuses.contains(problem.status.code), "unexpected status \(problem.status) for \(show(input))")
        case .complete(let head, let consumed):
            checkComplete(input, head: head, consumed: consumed)
        }
    }

    private func checkComplete(_ input: UnsafeRawBufferPointer, head: RequestHead, consumed: Int) {
        invariant(consumed > 0 && consumed <= input.count, "consumed \(consumed) of \(input.count) bytes")
        // Optional leading CRLF, request line and CRLF, header section within its limit.
        let most = 2 + limits.maxRequestLineBytes + 2 + limits.maxHeaderBytes
        invariant(consumed <= most, "consumed \(consumed) bytes, more than the limits allow (\(most))")
        invariant(
            consumed >= 4 && Array(input[(consumed - 4)..<consumed]) == Array("\r\n\r\n".utf8),
            "the head does not end with CRLF CRLF: \(show(input))")
        checkSemantics(head)

        // The bytes after the head play no part: the head alone parses to the same thing.
        guard case .complete(let again, let againConsumed) = parsePrefix(input, consumed) else {
            fatalError("the consumed prefix does not parse as a complete head: \(show(input))")
        }
        invariant(againConsumed == consumed, "re-parse consumed \(againConsumed), first parse \(consumed)")
        invariant(Self.same(head, again), "re-parse gives a different head for \(show(input))")

        // Every truncation of a good head is "need more", never a fault (picohttpparser's contract): a client
        // whose request arrives in several reads must not be refused.
        var firstLineEnd = 0
        while firstLineEnd < consumed - 1, input[firstLineEnd] != ASCII.lf { firstLineEnd += 1 }
        let cuts = Set([0, 1, consumed / 2, firstLineEnd, firstLineEnd + 1, consumed - 4, consumed - 3, consumed - 2, consumed - 1])
        for cut in cuts where cut >= 0 && cut < consumed {
            invariant(isIncomplete(parsePrefix(input, cut)), "the first \(cut) bytes of a complete head are not incomplete: \(show(input))")
        }
    }

    /// What a complete head promises the connection and the handler.
    private func checkSemantics(_ head: RequestHead) {
        invariant(!head.method.rawValue.isEmpty && head.method.rawValue.utf8.allSatisfy(ASCII.isTokenCharacter), "method \(head.method)")
        invariant(head.target.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "target \(head.target.debugDescription)")
        invariant(head.components.path.utf8.first == UInt8(ascii: "/") || head.target == "*", "path \(head.components.path.debugDescription)")
        for field in head.headers {
            invariant(!field.name.isEmpty && field.name.utf8.allSatisfy(ASCII.isTokenCharacter), "header name \(field.name.debugDescription)")
            let value = Array(field.value.utf8)
            invariant(value.allSatisfy(ASCII.isFieldValueCharacter), "header value \(field.value.debugDescription)")
            let isOWS = { (byte: UInt8) in byte == ASCII.space || byte == ASCII.tab }
            invariant(!(value.first.map(isOWS) ?? false) && !(value.last.map(isOWS) ?? false), "untrimmed value \(field.value.debugDescription)")
        }
        let hosts = head.headers.values(for: "Host").count
        invariant(head.isHTTP10 ? hosts <= 1 : hosts == 1, "\(hosts) Host headers")
        let hasLength = head.headers.contains("Content-Length"), hasCoding = head.headers.contains("Transfer-Encoding")
        switch head.framing {
        case .none:
            invariant(!hasLength && !hasCoding, "no framing although Content-Length or Transfer-Encoding is present")
        case .length(let length):
            invariant(hasLength && !hasCoding, "length framing with Transfer-Encoding or without Content-Length")
            invariant(length >= 0 && length <= limits.maxBodyBytes, "length \(length) outside 0...\(limits.maxBodyBytes)")
        case .chunked:
            invariant(hasCoding && !hasLength && !head.isHTTP10, "chunked framing with Content-Length or in HTTP/1.0")
        }
        if head.expectsContinue {
            invariant(!head.isHTTP10 && head.framing != .none && head.framing != .length(0), "100-continue without a body")
        }
    }

    private func isIncomplete(_ result: ParseResult<RequestHead>) -> Bool {
        if case .incomplete = result { true } else { false }
    }

    static func same(_ a: RequestHead, _ b: RequestHead) -> Bool {
        a.method == b.method && a.target == b.target && a.isHTTP10 == b.isHTTP10 && a.framing == b.framing
            && a.expectsContinue == b.expectsContinue && a.components.path == b.components.path
            && a.components.query.elementsEqual(b.components.query) { $0 == $1 }
            && a.headers.elementsEqual(b.headers) { $0 == $1 }
    }
}
