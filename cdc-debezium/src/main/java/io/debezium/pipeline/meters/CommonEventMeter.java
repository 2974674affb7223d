package io.debezium.pipeline.meters;

import io.debezium.data.Envelope.Operation;
import io.debezium.pipeline.metrics.traits.CommonEventMetricsMXBean;
import io.debezium.pipeline.source.spi.EventMetadataProvider;
import io.debezium.pipeline.spi.OffsetContext;
import io.debezium.spi.schema.DataCollectionId;
import io.debezium.util.Clock;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.data.Struct;

/**
 * This project's replacement for Debezium 3.5's class of the same name, which every connector's
 * snapshot and streaming metrics use: the same counters and the same JMX attributes, but the {@code
 * LastEvent} summary is made when it is read instead of for every event.
 *
 * <p>Debezium 3.5 renders each event's key into the summary string as it passes, through a new
 * Jackson {@code ObjectMapper} for every event ({@code SchemaUtil.asDetailedString}): on this
 * project's streaming benchmark that took about 40% of the time of the connector's thread, the
 * thread that limits how fast a capture job streams. Debezium 3.7 stopped doing it, but this build
 * is held at 3.5 (README, "Stack"). So the meter keeps the last event's parts, which Debezium does
 * not change once the event is made, and the summary is made from them when JMX asks. PostgreSQL's
 * and the binlog connectors' summaries read the event's position from the event itself, so it is
 * the string Debezium would have kept.
 *
 * <p>It keeps the last event's key and value alive until the next event, a few of Debezium's
 * structs. The job jar and the modules' class paths take this class instead of Debezium's (the job
 * jar's shade filter drops Debezium's; {@code CommonEventMeterTest} checks the API against
 * Debezium's, {@code JobJarITCase} which class the jar and the tests load). Remove it when Debezium
 * is upgraded past 3.7.
 */
public class CommonEventMeter implements CommonEventMetricsMXBean {

  protected final AtomicLong totalNumberOfEventsSeen = new AtomicLong();
  protected final AtomicLong totalNumberOfCreateEventsSeen = new AtomicLong();
  protected final AtomicLong totalNumberOfUpdateEventsSeen = new AtomicLong();
  protected final AtomicLong totalNumberOfDeleteEventsSeen = new AtomicLong();
  private final AtomicLong numberOfEventsFiltered = new AtomicLong();
  protected final AtomicLong numberOfErroneousEvents = new AtomicLong();
  protected final AtomicLong lastEventTimestamp = new AtomicLong(-1);

  private final Clock clock;
  private final EventMetadataProvider metadataProvider;
  private volatile LastEvent lastEvent;

  public CommonEventMeter(Clock clock, EventMetadataProvider metadataProvider) {
    this.clock = clock;
    this.metadataProvider = metadataProvider;
  }

  public void onEvent(
      DataCollectionId source,
      OffsetContext offset,
      Object key,
      Struct value,
      Operation operation) {
    count(operation);
    lastEvent = new LastEvent(source, offset, key, value);
  }

  public void onFilteredEvent() {
    numberOfEventsFiltered.incrementAndGet();
    count(null);
  }

  public void onFilteredEvent(Operation operation) {
    numberOfEventsFiltered.incrementAndGet();
    count(operation);
  }

  public void onErroneousEvent() {
    numberOfErroneousEvents.incrementAndGet();
    count(null);
  }

  public void onErroneousEvent(Operation operation) {
    numberOfErroneousEvents.incrementAndGet();
    count(operation);
  }

  private void count(Operation operation) {
    totalNumberOfEventsSeen.incrementAndGet();
    lastEventTimestamp.set(clock.currentTimeInMillis());
    if (operation == Operation.CREATE) {
      totalNumberOfCreateEventsSeen.incrementAndGet();
    } else if (operation == Operation.UPDATE) {
      totalNumberOfUpdateEventsSeen.incrementAndGet();
    } else if (operation == Operation.DELETE) {
      totalNumberOfDeleteEventsSeen.incrementAndGet();
    }
  }

  @Override
  public String getLastEvent() {
    LastEvent last = lastEvent;
    return last == null
        ? null
        : metadataProvider.toSummaryString(last.source, last.offset, last.key, last.value);
  }

  @Override
  public long getMilliSecondsSinceLastEvent() {
    long last = lastEventTimestamp.get();
    return last == -1 ? -1 : clock.currentTimeInMillis() - last;
  }

  @Override
  public long getTotalNumberOfEventsSeen() {
    return totalNumberOfEventsSeen.get();
  }

  @Override
  public long getTotalNumberOfCreateEventsSeen() {
    return totalNumberOfCreateEventsSeen.get();
  }

  @Override
  public long getTotalNumberOfUpdateEventsSeen() {
    return totalNumberOfUpdateEventsSeen.get();
  }

  @Override
  public long getTotalNumberOfDeleteEventsSeen() {
    return totalNumberOfDeleteEventsSeen.get();
  }

  @Override
  public long getNumberOfEventsFiltered() {
    return numberOfEventsFiltered.get();
  }

  @Override
  public long getNumberOfErroneousEvents() {
    return numberOfErroneousEvents.get();
  }

  public void reset() {
    totalNumberOfEventsSeen.set(0);
    totalNumberOfCreateEventsSeen.set(0);
    totalNumberOfUpdateEventsSeen.set(0);
    totalNumberOfDeleteEventsSeen.set(0);
    lastEventTimestamp.set(-1);
    numberOfEventsFiltered.set(0);
    numberOfErroneousEvents.set(0);
    lastEvent = null;
  }

  /** The parts of the last event its summary is made of; Debezium does not change them later. */
  private record LastEvent(
      DataCollectionId source, OffsetContext offset, Object key, Struct value) {}
}
