import BudgetCore

/// A member that `_embed` or `_expand` appends to each generic record, following json-server's links.
///
/// json-server links a child to its parent by `<singular parent>Id`: `_embed=comments` on posts adds
/// `"comments":[…]` (the comments whose `postId` is the post's id), `_expand=post` on comments adds
/// `"post":{…}` (the post whose id is the comment's `postId`). json-server 1.x spells the second one
/// `_embed=post` too, so an `_embed` name that is not a collection but the singular of one expands.
enum DocumentRelation: Sendable, Equatable {
    /// `"<collection>":[…]`: the records of `collection` whose `field` names the record's id.
    case children(collection: String, field: String)
    /// `"<member>":{…}`: the record of `collection` whose id is the record's `field`; left out when there is none.
    case parent(member: String, collection: String, field: String)

    /// The member's name in the answer.
    var member: String {
        switch self {
        case .children(let collection, _): collection
        case .parent(let member, _, _): member
        }
    }

    /// The relations that `_embed` and `_expand` name on `collection`, given the plural collections that exist.
    ///
    /// A name that is neither a plural collection nor the singular of one is a 400 listing the names that work.
    /// json-server 0.17 answers `"typo":[]` for such an `_embed` and ignores such an `_expand`; both hide a
    /// misspelling from the client, and the typed resources answer 400 for an unknown relation too.
    /// A name given twice counts once, so no member appears twice.
    static func resolve(embeds: [String], expands: [String], on collection: String, among plurals: [String]) throws -> [DocumentRelation] {
        var relations: [DocumentRelation] = []
        func add(_ relation: DocumentRelation) {
            if !relations.contains(where: { $0.member == relation.member }) { relations.append(relation) }
        }
        for name in embeds {
            if plurals.contains(name) {
                add(.children(collection: name, field: CollectionNames.foreignKey(for: collection)))
            } else if let parent = parent(named: name, among: plurals) {
                add(parent)
            } else {
                throw unknown("_embed", name, choices: plurals + plurals.map(CollectionNames.singular))
            }
        }
        for name in expands {
            guard let parent = parent(named: name, among: plurals) else {
                throw unknown("_expand", name, choices: plurals.map(CollectionNames.singular))
            }
            add(parent)
        }
        return relations
    }

    /// `post` → the record of `posts` named by `postId`; nil when no plural collection has `name` as its singular.
    private static func parent(named name: String, among plurals: [String]) -> DocumentRelation? {
        guard let collection = plurals.first(where: { CollectionNames.singular($0) == name }) else { return nil }
        return .parent(member: name, collection: collection, field: CollectionNames.foreignKey(for: collection))
    }

    private static func unknown(_ parameter: String, _ name: String, choices: [String]) -> APIError {
        var distinct: [String] = []
        for choice in choices where !distinct.contains(choice) { distinct.append(choice) }
        let known = distinct.isEmpty ? "none" : distinct.joined(separator: ", ")
        return APIError.malformedQuery("\(parameter)=\(name) names no collection here; it takes \(known)")
    }
}
