import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns a feed's bytes into UTF-8 for the XML parser, for the encodings feeds declare most and
/// libxml2 handles least well.
///
/// Windows-1252 is decoded here (libxml2 reads its 0x80–0x9F as C1 controls, so "don’t" becomes
/// "don\u{92}t"), and so is ISO-8859-1, which real feeds declare while writing Windows-1252 (browsers
/// decode it that way for the same reason). UTF-16 with a byte order mark is decoded too. The XML
/// declaration is rewritten to say UTF-8; any other encoding is left to libxml2.
enum XMLEncoding {
    static func utf8(_ data: Data) -> Data {
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) {
            guard let text = String(data: data, encoding: .utf16) else { return data }
            return Data(redeclared(text).utf8)
        }
        guard let declared = declaredEncoding(data) else { return data }
        switch declared {
        case "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii":
            return fromWindows1252(data)
        case "utf-8", "utf8", "utf-16", "utf-16le", "utf-16be", "iso-10646-ucs-2", "ucs-2":
            return data
        default:
            // Converted here, with iconv as libxml2 would, so that the parser only ever reads UTF-8 that has been
            // checked: libxml2 ignores the encoding of a declaration it finds malformed and would then hand
            // FoundationXML bytes that are not UTF-8, on which FoundationXML traps (a fuzzer find).
            guard convertedByParser.contains(declared), let converted = iconvToUTF8(data, from: declared) else { return data }
            return Data(redeclared(String(decoding: converted, as: UTF8.self)).utf8)
        }
    }

    /// `data` converted from `encoding` to UTF-8 by iconv; `nil` when iconv does not know the encoding or
    /// the bytes are not in it.
    private static func iconvToUTF8(_ data: Data, from encoding: String) -> [UInt8]? {
        let converter = iconv_open("UTF-8", encoding.uppercased())
        guard converter != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
        let produced: Int? = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                var inPointer = UnsafeMutableRawPointer(source.baseAddress!).assumingMemoryBound(to: CChar.self) as UnsafeMutablePointer<CChar>?
                var outPointer = UnsafeMutableRawPointer(target.baseAddress!).assumingMemoryBound(to: CChar.self) as UnsafeMutablePointer<CChar>?
                var inLeft = source.count, outLeft = target.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
                return target.count - outLeft
            }
        }
        guard let produced else { return nil }
        return Array(output.prefix(produced))
    }

    /// Encodings libxml2 converts itself (through iconv); a document declaring any other is read as Windows-1252.
    static let convertedByParser: Set<String> = [
        "utf-8", "utf8", "utf-16", "utf-16le", "utf-16be", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5",
        "iso-8859-6", "iso-8859-7", "iso-8859-8", "iso-8859-9", "iso-8859-10", "iso-8859-13", "iso-8859-14", "iso-8859-15",
        "iso-8859-16", "windows-1250", "windows-1251", "windows-1253", "windows-1254", "windows-1255", "windows-1256",
        "windows-1257", "windows-1258", "big5", "euc-kr", "euc-jp", "shift_jis", "gb2312", "gbk", "gb18030", "koi8-r",
        "koi8-u", "iso-2022-jp", "tis-620", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
        "shift-jis", "sjis", "euc_kr", "ks_c_5601-1987", "iso-10646-ucs-2", "ucs-2",
    ]

    /// The declared encoding when it is one neither sitegen nor the parser converts.
    static func unsupportedEncoding(_ data: Data) -> String? {
        guard let declared = declaredEncoding(data), !convertedByParser.contains(declared) else { return nil }
        return declared
    }

    /// `data` read as Windows-1252, as UTF-8, with its declaration saying so.
    static func fromWindows1252(_ data: Data) -> Data {
        var scalars = String.UnicodeScalarView()
        for byte in data {
            scalars.append(Unicode.Scalar(byte >= 0x80 && byte <= 0x9F ? windows1252[Int(byte - 0x80)] : UInt32(byte)) ?? "\u{FFFD}")
        }
        return Data(redeclared(String(scalars)).utf8)
    }

    /// Where `data`, by now meant as UTF-8 (`utf8(_:)` has converted the encodings it knows), first breaks
    /// UTF-8: its 1-based line and column; `nil` when it is valid.
    ///
    /// FoundationXML traps (crashing the process) when libxml2 hands it invalid UTF-8 in a name or a
    /// comment, so such a document is read as Windows-1252 before it reaches the parser.
    static func invalidUTF8Position(_ data: Data) -> (line: Int, column: Int)? {
        var validator = UTF8Validator()
        data.withUnsafeBytes { validator.feed($0) }
        validator.finish()
        return validator.firstInvalid
    }

    /// The lower-cased `encoding` of the XML declaration, if the document starts with one.
    static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(200), as: UTF8.self)
        // `<?xml` then white space, as XMLCleaner keeps it: `<?xml-stylesheet` or `<?xml\u{B4}` declares nothing.
        guard head.hasPrefix("<?xml"), let after = head.dropFirst(5).first, after == " " || after == "\t" || after == "\r\n"
            || after == "\n" || after == "\r", let end = head.range(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return rest.dropFirst().prefix { $0 != quote }.lowercased()
    }

    /// `text` with its XML declaration's encoding (if any) replaced by UTF-8.
    private static func redeclared(_ text: String) -> String {
        var text = text
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>") else { return text }
        let declaration = String(text[..<end.lowerBound])
        let fixed = declaration.replacingOccurrences(of: #"encoding\s*=\s*["'][^"']*["']"#, with: "encoding=\"UTF-8\"", options: .regularExpression)
        return fixed + text[end.lowerBound...]
    }

    /// `text` with C1 control characters (U+0080–U+009F) replaced by the Windows-1252 characters they
    /// almost always are: text decoded as ISO-8859-1 somewhere upstream ("don\u{92}t" for "don’t").
    static func repairingC1Controls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value >= 0x80 && $0.value <= 0x9F }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x80, scalar.value <= 0x9F, let repaired = Unicode.Scalar(windows1252[Int(scalar.value - 0x80)]),
                repaired.value != 0xFFFD
            {
                scalars.append(repaired)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// Windows-1252's characters for 0x80–0x9F (where it differs from ISO-8859-1); undefined ones map to U+FFFD.
    private static let windows1252: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
        0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]
}
