import Foundation

/// RFC 3339 UTC timestamps with milliseconds, as every payload and the request log write them, computed from the Unix
/// time without a formatter (days to civil date in the proleptic Gregorian calendar, H. Hinnant's `civil_from_days`).
public enum Timestamps {
    /// For example `2026-11-10T17:09:05.000Z`.
    public static func rfc3339(_ date: Date) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendRFC3339(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends ``rfc3339(_:)`` of `date` to `out`. Whole milliseconds rounded down, as the store keeps times.
    public static func appendRFC3339(_ date: Date, to out: inout [UInt8]) {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))  // trap-safe: a server-side date
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        appendDecimal(year, minimumDigits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDecimal(month, minimumDigits: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDecimal(day, minimumDigits: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDecimal(secondOfDay / 3600, minimumDigits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDecimal(secondOfDay / 60 % 60, minimumDigits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDecimal(secondOfDay % 60, minimumDigits: 2, to: &out)
        out.append(UInt8(ascii: "."))
        appendDecimal(milliseconds - seconds * 1000, minimumDigits: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Appends `value` in decimal, zero-padded to `minimumDigits` (timestamps' fields, the request log's numbers).
    public static func appendDecimal(_ value: Int, minimumDigits: Int = 1, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var count = 0
        var rest = value.magnitude
        repeat {
            count += 1
            rest /= 10
        } while rest > 0
        // Zeros first (the padding), then the digits written in place from the last.
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(count, minimumDigits)))
        var index = out.count - 1
        rest = value.magnitude
        while rest > 0 {
            out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }
}
