@testable import AirlockDesk
import AirlockTestSupport
import Testing

/// Metrics of an instance of a fleet, which Prometheus sums across instances.
@Suite("Fleet metrics: one labelled file per instance")
struct FleetMetricsTests {
    @Test("metrics of an instance carry airlock_instance on every sample and go to a file of its own")
    func metricsPerInstance() {
        let text = Metrics(instance: "a").text()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            expect(line.contains("{airlock_instance=\"a\""), "\(line)")
        }
        expect(!Metrics().text().contains("airlock_instance"))
        expectEqual(Metrics.fileName("airlock.prom", instance: "a"), "airlock.a.prom")
        expectEqual(Metrics.fileName("metrics.txt", instance: "b"), "metrics.txt.b")
        expectEqual(Metrics.fileName("airlock.prom", instance: nil), "airlock.prom")
    }
}
