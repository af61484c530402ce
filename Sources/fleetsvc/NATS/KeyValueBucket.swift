import CContextBusNATS
import ContextBusSupport

/// A JetStream key-value bucket (libnats' `kvStore`): where a gateway remembers the commands it took, by id, with
/// their first result (`CommandRunner`). Every call blocks; used by one thread, which closes it.
final class KeyValueBucket: @unchecked Sendable {
    // @unchecked Sendable: the handle is used only by the thread that made the bucket, which destroys it in `close`.
    private let handle: OpaquePointer

    /// Binds to bucket `name`, creating it when it is missing (values expire `ttl` after they were written).
    init(name: String, ttl: Duration, replicas: Int, on jetStream: JetStream) throws {
        var handle: OpaquePointer?
        var status = js_KeyValue(&handle, jetStream.context, name)
        if status != NATS_OK {
            var config = kvConfig()
            kvConfig_Init(&config)
            config.History = 1
            config.TTL = JetStream.nanoseconds(ttl)
            config.Replicas = Int32(replicas)
            config.StorageType = js_FileStorage
            status = name.withCString { cName in
                config.Bucket = cName
                return js_CreateKeyValue(&handle, jetStream.context, &config)
            }
        }
        guard status == NATS_OK, let handle else {
            throw JetStream.Failure(operation: "key-value bucket \(name)", status: status, jetStreamCode: jsErrCode(0))
        }
        self.handle = handle
    }

    /// The value of `key`, or `nil` when it has none (never written, deleted, or expired).
    func value(of key: String) throws -> [UInt8]? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, handle, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else {
            throw JetStream.Failure(operation: "read \(key)", status: status, jetStreamCode: jsErrCode(0))
        }
        defer { kvEntry_Destroy(entry) }
        let length = Int(kvEntry_ValueLen(entry))
        guard length > 0, let bytes = kvEntry_Value(entry) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    /// Writes `value` under `key` only when the key has none; `false` when it has one already.
    func create(_ key: String, value: [UInt8]) throws -> Bool {
        let status = value.withUnsafeBytes { bytes in
            kvStore_Create(nil, handle, key, bytes.baseAddress, Int32(bytes.count))
        }
        if status == NATS_OK { return true }
        // libnats answers a key that has a value with a JetStream error (wrong last sequence): tell it from a
        // failure by reading the key.
        if try self.value(of: key) != nil { return false }
        throw JetStream.Failure(operation: "create \(key)", status: status, jetStreamCode: jsErrCode(0))
    }

    func put(_ key: String, value: [UInt8]) throws {
        let status = value.withUnsafeBytes { bytes in
            kvStore_Put(nil, handle, key, bytes.baseAddress, Int32(bytes.count))
        }
        guard status == NATS_OK else {
            throw JetStream.Failure(operation: "write \(key)", status: status, jetStreamCode: jsErrCode(0))
        }
    }

    func delete(_ key: String) throws {
        let status = kvStore_Delete(handle, key)
        guard status == NATS_OK else {
            throw JetStream.Failure(operation: "delete \(key)", status: status, jetStreamCode: jsErrCode(0))
        }
    }

    func close() { kvStore_Destroy(handle) }
}
