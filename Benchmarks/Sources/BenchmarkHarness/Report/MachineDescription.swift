#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line description of the machine a run was measured on.
public enum MachineDescription {
    /// CPU model, logical CPUs online, and the kernel.
    public static var summary: String {
        var parts: [String] = []
        if let model = cpuModel { parts.append(model) }
        parts.append("\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) logical CPUs")
        var names = utsname()
        if uname(&names) == 0 {
            let system = withUnsafeBytes(of: &names.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let machine = withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            parts.append("\(system) \(release) \(machine)")
        }
        return parts.joined(separator: ", ")
    }

    /// The `model name` line of /proc/cpuinfo, where there is one.
    static var cpuModel: String? {
        guard let file = fopen("/proc/cpuinfo", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            guard let line else { break }
            let text = String(cString: line)
            if text.hasPrefix("model name"), let colon = text.firstIndex(of: ":") {
                return String(text[text.index(after: colon)...]).trimmingWhitespace
            }
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
