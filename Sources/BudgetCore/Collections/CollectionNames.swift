/// The rules for naming generic collections: which names are free, and the singular form of a plural name.
///
/// json-server links records by `<singular collection>Id` (`comments.postId` → `posts`), so deleting a post
/// and the nested route `/posts/1/comments` both need the singular of `posts` (docs/json-server.md).
public enum CollectionNames {
    /// Top-level paths the server itself answers; a seed or `PUT /db` may not define them.
    public static let reserved: Set<String> = [
        "db", "health", "ready", "metrics", "changes", "batch", "months", "reports", "ledgers", "auth", "transfers",
    ]

    /// Whether `name` fits the `collections_name_format` constraint of migrations/0005.
    public static func isWellFormed(_ name: String) -> Bool {
        (1...100).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// The member that names a record of `collection` in another record, e.g. `postId` for `posts`.
    public static func foreignKey(for collection: String) -> String {
        singular(collection) + "Id"
    }

    /// The singular of an English plural: irregular words first, then the common suffix rules.
    ///
    /// Only the end of the name changes, so `blog_posts` becomes `blog_post` and `salespeople` `salesperson`.
    public static func singular(_ plural: String) -> String {
        for (pluralEnding, singularEnding) in irregular where plural.hasSuffix(pluralEnding) {
            return String(plural.dropLast(pluralEnding.count)) + singularEnding
        }
        for (pluralEnding, singularEnding) in suffixRules where plural.hasSuffix(pluralEnding) {
            guard plural.count > pluralEnding.count else { return plural }
            return String(plural.dropLast(pluralEnding.count)) + singularEnding
        }
        return plural
    }

    /// Words whose plural no suffix rule covers; longer endings first so `movies` is not read as `-ies`.
    private static let irregular: [(String, String)] = [
        ("people", "person"), ("children", "child"), ("women", "woman"), ("men", "man"),
        ("mice", "mouse"), ("geese", "goose"), ("teeth", "tooth"), ("feet", "foot"), ("oxen", "ox"),
        ("movies", "movie"), ("cookies", "cookie"), ("series", "series"), ("species", "species"),
        ("news", "news"), ("data", "datum"), ("criteria", "criterion"), ("indices", "index"),
        ("vertices", "vertex"), ("matrices", "matrix"), ("analyses", "analysis"), ("statuses", "status"),
        ("buses", "bus"), ("viruses", "virus"), ("aliases", "alias"), ("quizzes", "quiz"),
        ("shoes", "shoe"), ("toes", "toe"), ("knives", "knife"), ("wives", "wife"), ("lives", "life"),
        ("sheep", "sheep"), ("fish", "fish"), ("deer", "deer"),
    ]

    /// Suffix rules in the order they are tried; the first that matches wins.
    private static let suffixRules: [(String, String)] = [
        ("ies", "y"), ("ves", "f"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"),
        ("zzes", "zz"), ("oes", "o"), ("ss", "ss"), ("us", "us"), ("is", "is"), ("s", ""),
    ]
}
