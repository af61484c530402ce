import ContextBusObjectGraph
import Foundation

extension StoreServiceConfiguration {
    /// The model `--model` names, or the built-in one.
    ///
    /// - Throws: `StoreServiceError.model` when the file cannot be read or is not a valid model.
    func loadModel() throws(StoreServiceError) -> Model {
        guard let path = modelPath else { return .deviceReadings }
        do {
            return try Model(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .model(path: path, reason: "\(error)")
        }
    }
}
