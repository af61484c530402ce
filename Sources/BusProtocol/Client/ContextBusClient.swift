// A client of the services: `import ContextBusClient` gives `BusClient`, `RemoteStore` (contexts whose root is
// storesvc's), every method's params and result (ContextBusWire), the object graph and the reactive core their
// APIs are made of, and `EventLoop` for a client that brings its own (docs/architecture.md, "Modules").
@_exported import ContextBusObjectGraph
@_exported import ContextBusReactive
@_exported import ContextBusSupport
@_exported import ContextBusTransport
@_exported import ContextBusWire
