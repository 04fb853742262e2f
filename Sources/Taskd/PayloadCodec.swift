import TaskdDaemon
import TaskdProtocol

/// Decodes wake payloads into a handler's `Decodable` type and encodes its `Encodable` result
/// (`JSONValueDecoder` and `JSONValueEncoder`; results above `maxResultBytes` are refused).
enum PayloadCodec {
    static let maxResultBytes = 16 * 1024

    /// The payload decoded as `T`; a payload that does not decode fails the run for good.
    static func decode<T: Decodable>(_ type: T.Type, from json: String?) throws -> T? {
        guard let json else { return nil }
        do {
            return try JSONValueDecoder().decode(T.self, from: json)
        } catch {
            throw PermanentFailure("the payload does not decode as \(T.self): \(JSONValueDecoder.describe(error))")
        }
    }

    /// The result as JSON text, its object members in key order.
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let data = try JSONValueEncoder().encode(value).bytes
        guard data.count <= maxResultBytes else {
            throw PermanentFailure("the result is \(data.count) bytes of JSON; at most \(maxResultBytes) are kept")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
