import Foundation
import TestSupport

extension TestResponse {
    /// The body as a JSON object; empty when it is not one.
    var object: [String: Any] {
        (try? json()) as? [String: Any] ?? [:]
    }

    /// The body as a JSON array of objects; empty when it is not one.
    var array: [[String: Any]] {
        (try? json()) as? [[String: Any]] ?? []
    }

    /// The `id` of the record in the body.
    var recordID: Int64? {
        (object["id"] as? NSNumber)?.int64Value
    }
}
