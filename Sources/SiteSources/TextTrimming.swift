/// Trimming without Foundation's `NSString` bridge, which cost a sixth of a million-record load when every
/// typed field went through `trimmingCharacters(in:)`.
extension StringProtocol {
    /// The text without leading and trailing blanks: tabs and Unicode space separators (what
    /// `CharacterSet.whitespaces` holds), plus line ends when `newlines` is true.
    public func trimmingBlanks(newlines: Bool = false) -> Substring {
        let scalars = Substring(self).unicodeScalars
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case " ", "\t": return true
            case "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}": return newlines
            default: return scalar.value >= 0xA0 && scalar.properties.generalCategory == .spaceSeparator
            }
        }
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return Substring(self).prefix(0) }
        let last = scalars.lastIndex(where: { !isBlank($0) })!
        return Substring(scalars[first...last])
    }
}

/// Zero-padded decimal digits, for dates written many times a load (`String(format:)` is slow here).
func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
