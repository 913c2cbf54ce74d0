import BudgetCore
import Foundation

/// An amount in a record is a JSON number the server wrote with two decimals (`400.00`); a string of decimal
/// text reads too. Foundation's decoder reads a number into `Decimal` from its text, never through a binary
/// float, and `Money(parsing:)` then takes that text; `Decimal` carries the digits and does no arithmetic.
extension Money: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try (try? container.decode(String.self)) ?? "\(container.decode(Decimal.self))"
        do {
            self = try Money(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text) is not an amount in whole cents (\(error))")
        }
    }

    /// A JSON number with the amount's digits, as a write's `amount` takes it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        guard let number = Decimal(string: description, locale: Locale(identifier: "en_US_POSIX")) else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "\(self) is not decimal text"))
        }
        try container.encode(number)
    }
}
