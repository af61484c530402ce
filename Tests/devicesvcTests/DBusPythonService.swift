import Foundation

@testable import ContextBusDBus
@testable import ContextBusServer
@testable import devicesvc

/// A python-dbus service on a private bus, exporting test objects under a well-known name.
///
/// Objects (interface `org.example.Thing` unless noted):
/// - `/org/example/Thing`: `Echo(v) -> v`, `Add(ii) -> i`, `Fail(s)` (error `org.example.Error.Failed` with the
///   text), `NeverAnswer()` (keeps the reply), `ReleaseAnswers() -> u` (sends the kept replies, then answers with
///   their count), `Emit(s)` (emits signal `Ping(s)`, then returns), `Quit()`; and
///   `org.freedesktop.DBus.Properties` for `Name` (s), `Level` (i), `Enabled` (b), whose `Set` emits
///   `PropertiesChanged` with the new value and invalidates `Name`.
/// - `/`: `org.freedesktop.DBus.ObjectManager.GetManagedObjects`, and `org.example.Manager.AddDevice(s) -> o` /
///   `RemoveDevice(s)`, which emit `InterfacesAdded` / `InterfacesRemoved`.
final class PythonService: Sendable {
    static let interface = "org.example.Thing"
    static let thingPath = try! DBusObjectPath("/org/example/Thing")

    let name: String
    let uniqueName: String
    let process: TestProcess

    init(bus: PrivateBus, name: String = "org.example.Thing") throws {
        self.name = name
        let script = bus.directory + "/service.py"
        try PythonService.source.write(toFile: script, atomically: true, encoding: .utf8)
        process = try TestProcess(executable: "/usr/bin/python3", arguments: [script, bus.pathAddress, name])
        do {
            let line = try process.readLine()
            guard line.hasPrefix("READY ") else { throw TestProcessError.noOutput(pid: process.pid) }
            uniqueName = String(line.dropFirst(6))
        } catch {
            process.stop()
            throw error
        }
    }

    func stop() {
        process.stop()
    }

    static let source = #"""
        import sys
        import dbus
        import dbus.service
        import dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        loop = GLib.MainLoop()
        bus = dbus.bus.BusConnection(sys.argv[1])
        bus.call_on_disconnection(lambda connection: loop.quit())
        IFACE = "org.example.Thing"
        PROPS = dbus.PROPERTIES_IFACE
        OM = "org.freedesktop.DBus.ObjectManager"
        kept = []


        class Failed(dbus.DBusException):
            _dbus_error_name = "org.example.Error.Failed"


        class UnknownProperty(dbus.DBusException):
            _dbus_error_name = "org.freedesktop.DBus.Error.UnknownProperty"


        class Thing(dbus.service.Object):
            def __init__(self):
                dbus.service.Object.__init__(self, bus, "/org/example/Thing")
                self.props = {"Name": dbus.String("thing"), "Level": dbus.Int32(3), "Enabled": dbus.Boolean(False)}

            @dbus.service.method(IFACE, in_signature="v", out_signature="v")
            def Echo(self, value):
                return value

            @dbus.service.method(IFACE, in_signature="ii", out_signature="i")
            def Add(self, a, b):
                return a + b

            @dbus.service.method(IFACE, in_signature="s", out_signature="")
            def Fail(self, text):
                raise Failed(text)

            @dbus.service.method(IFACE, in_signature="", out_signature="", async_callbacks=("ok", "err"))
            def NeverAnswer(self, ok, err):
                kept.append(ok)

            @dbus.service.method(IFACE, in_signature="", out_signature="u")
            def ReleaseAnswers(self):
                count = len(kept)
                while kept:
                    kept.pop()()
                return dbus.UInt32(count)

            @dbus.service.method(IFACE, in_signature="s", out_signature="")
            def Emit(self, text):
                self.Ping(text)

            @dbus.service.signal(IFACE, signature="s")
            def Ping(self, text):
                pass

            @dbus.service.method(IFACE, in_signature="", out_signature="")
            def Quit(self):
                GLib.idle_add(loop.quit)

            @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
            def Get(self, interface, name):
                if interface != IFACE or name not in self.props:
                    raise UnknownProperty("no property %s.%s" % (interface, name))
                return self.props[name]

            @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
            def GetAll(self, interface):
                if interface != IFACE:
                    raise UnknownProperty("no interface %s" % interface)
                return dbus.Dictionary(self.props, signature="sv")

            @dbus.service.method(PROPS, in_signature="ssv", out_signature="")
            def Set(self, interface, name, value):
                if interface != IFACE or name not in self.props:
                    raise UnknownProperty("no property %s.%s" % (interface, name))
                self.props[name] = value
                self.PropertiesChanged(IFACE, dbus.Dictionary({name: value}, signature="sv"),
                                       dbus.Array(["Name"], signature="s"))

            @dbus.service.signal(PROPS, signature="sa{sv}as")
            def PropertiesChanged(self, interface, changed, invalidated):
                pass


        class Device(dbus.service.Object):
            def __init__(self, path):
                dbus.service.Object.__init__(self, bus, path)


        class Root(dbus.service.Object):
            def __init__(self):
                dbus.service.Object.__init__(self, bus, "/")
                self.devices = {}

            def interfaces(self, name):
                return dbus.Dictionary({
                    "org.example.Device1": dbus.Dictionary(
                        {"Alias": dbus.String(name), "RSSI": dbus.Int16(-42),
                         "UUIDs": dbus.Array(["180d"], signature="s")}, signature="sv"),
                    "org.example.Battery1": dbus.Dictionary({"Percentage": dbus.Byte(77)}, signature="sv"),
                }, signature="sa{sv}")

            @dbus.service.method(OM, in_signature="", out_signature="a{oa{sa{sv}}}")
            def GetManagedObjects(self):
                objects = {dbus.ObjectPath("/org/example/Thing"): dbus.Dictionary(
                    {IFACE: dbus.Dictionary(thing.props, signature="sv")}, signature="sa{sv}")}
                for name, path in self.devices.items():
                    objects[path] = self.interfaces(name)
                return dbus.Dictionary(objects, signature="oa{sa{sv}}")

            @dbus.service.method("org.example.Manager", in_signature="s", out_signature="o")
            def AddDevice(self, name):
                path = dbus.ObjectPath("/org/example/dev_" + name)
                self.devices[name] = path
                Device(path)
                self.InterfacesAdded(path, self.interfaces(name))
                return path

            @dbus.service.method("org.example.Manager", in_signature="s", out_signature="")
            def RemoveDevice(self, name):
                path = self.devices.pop(name)
                self.InterfacesRemoved(path, dbus.Array(["org.example.Device1", "org.example.Battery1"], signature="s"))

            @dbus.service.signal(OM, signature="oa{sa{sv}}")
            def InterfacesAdded(self, path, interfaces):
                pass

            @dbus.service.signal(OM, signature="oas")
            def InterfacesRemoved(self, path, interfaces):
                pass


        thing = Thing()
        root = Root()
        name = dbus.service.BusName(sys.argv[2], bus)
        print("READY " + bus.get_unique_name(), flush=True)
        loop.run()
        """#
}
