@testable import HTTPWire

// The chunked body decoder over arbitrary bytes (the input is what follows a head with
// `Transfer-Encoding: chunked`), with the default limits and with tight ones.

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    for limits in ChunkedBodyTarget.limits {
        ChunkedBodyTarget(limits: limits).check(input)
    }
    return 0
}

struct ChunkedBodyTarget {
    static let limits = [Limits(), Limits(maxRequestLineBytes: 64, maxHeaderBytes: 64, maxBodyBytes: 40)]

    /// A malformed body is 400, a large one 413, a large trailer section 431.
    static let framingStatuses: Set = [400, 413, 431]

    let limits: Limits

    func decode(_ bytes: UnsafeRawBufferPointer) -> ParseResult<[UInt8]> {
        ChunkedDecoder(limits: limits).decode(bytes, maxBodyBytes: limits.maxBodyBytes)
    }

    func decodePrefix(_ input: UnsafeRawBufferPointer, _ count: Int) -> ParseResult<[UInt8]> {
        withExactCopy(of: UnsafeRawBufferPointer(rebasing: input[..<count])) { decode($0) }
    }

    func check(_ input: UnsafeRawBufferPointer) {
        switch decode(input) {
        case .incomplete:
            if !input.isEmpty {
                invariant(isIncomplete(decodePrefix(input, input.count - 1)), "a prefix of an incomplete body is not incomplete: \(show(input))")
            }
        case .invalid(let problem):
            invariant(Self.framingStatuses.contains(problem.status.code), "unexpected status \(problem.status) for \(show(input))")
        case .complete(let body, let consumed):
            checkComplete(input, body: body, consumed: consumed)
        }
    }

    private func checkComplete(_ input: UnsafeRawBufferPointer, body: [UInt8], consumed: Int) {
        invariant(consumed > 0 && consumed <= input.count, "consumed \(consumed) of \(input.count) bytes")
        // Every chunk costs at least a digit and two CRLFs besides its data; the last chunk `0` CRLF CRLF is 5 bytes.
        invariant(body.count + 5 <= consumed, "decoded \(body.count) bytes out of \(consumed)")
        invariant(body.count <= limits.maxBodyBytes, "decoded \(body.count) bytes, over the limit \(limits.maxBodyBytes)")

        // What follows the body (the next pipelined request) plays no part.
        guard case .complete(let again, let againConsumed) = decodePrefix(input, consumed) else {
            fatalError("the consumed prefix does not decode as a complete body: \(show(input))")
        }
        invariant(again == body && againConsumed == consumed, "re-decoding the consumed prefix differs: \(show(input))")

        // Truncating a good body means "need more", never a fault.
        for cut in Set([0, 1, consumed / 2, consumed - 3, consumed - 2, consumed - 1]) where cut >= 0 && cut < consumed {
            invariant(isIncomplete(decodePrefix(input, cut)), "the first \(cut) bytes of a complete body are not incomplete: \(show(input))")
        }

        // The body written again as plain chunks decodes to itself.
        let encoded = Self.encode(body, chunkSize: 7)
        let reencoded = encoded.withUnsafeBytes { bytes in withExactCopy(of: bytes) { decode($0) } }
        guard case .complete(let roundTrip, let roundTripConsumed) = reencoded else {
            fatalError("the re-encoded body does not decode: \(String(decoding: encoded, as: UTF8.self).debugDescription)")
        }
        invariant(roundTrip == body && roundTripConsumed == encoded.count, "the re-encoded body decodes differently")
    }

    /// Plain chunked coding: hex size, CRLF, data, CRLF, and the last chunk with an empty trailer section.
    static func encode(_ body: [UInt8], chunkSize: Int) -> [UInt8] {
        var output: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + chunkSize, body.count)
            output += Array(String(end - start, radix: 16).utf8) + [ASCII.cr, ASCII.lf]
            output += body[start..<end]
            output += [ASCII.cr, ASCII.lf]
            start = end
        }
        return output + Array("0\r\n\r\n".utf8)
    }

    private func isIncomplete(_ result: ParseResult<[UInt8]>) -> Bool {
        if case .incomplete = result { true } else { false }
    }
}
