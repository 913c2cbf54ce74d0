import BudgetCore

/// How a PATCH body combines with the stored object, chosen by the request's media type (docs/json-server.md).
enum PatchRule: Sendable {
    /// `application/json`: json-server's shallow merge (`Object.assign`). Each member of the body replaces the
    /// stored member whole, nested objects included, and a `null` is stored as `null`.
    case shallow
    /// `application/merge-patch+json`: RFC 7396. Objects merge member by member at every depth, a `null` at any
    /// depth removes that member, and anything that is not an object (arrays too) replaces what was there.
    case mergePatch

    init(contentType: String?) {
        self = contentType == RequestBody.mergePatch ? .mergePatch : .shallow
    }

    /// `target` with `patch` applied; members keep their place and new ones are appended, as JavaScript keeps them.
    func apply(_ patch: JSONObject, to target: JSONObject) -> JSONObject {
        var result = target
        for member in patch {
            switch self {
            case .shallow: result[member.name] = member.value
            case .mergePatch: result[member.name] = result[member.name].mergePatched(with: member.value)
            }
        }
        return result
    }
}

extension Optional<JSONValue> {
    /// RFC 7396 §2's MergePatch(Target, Patch) for one member: nil (the member goes) when the patch is `null`.
    ///
    /// Numbers stay the literal text the client sent (`JSONValue.number`), so merging loses no digit.
    func mergePatched(with patch: JSONValue) -> JSONValue? {
        // RFC 7396 §2: a patch that is not an object replaces the target whole; `null` removes it.
        guard case .object(let patchMembers) = patch else { return patch == .null ? nil : patch }
        // RFC 7396 §2: a target that is not an object (or is missing) is merged into as if it were `{}`.
        var members: JSONObject
        if case .object(let stored)? = self { members = stored } else { members = JSONObject() }
        for member in patchMembers {
            members[member.name] = members[member.name].mergePatched(with: member.value)
        }
        return .object(members)
    }
}
