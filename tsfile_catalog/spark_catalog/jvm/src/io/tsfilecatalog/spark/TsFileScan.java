package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;

/**
 * A planned scan of a catalog table: Spark's own Python-source scan, with the options of a
 * batch read (pinned to the version Spark loaded) or of a stream (from the version the
 * stream's options name, following new commits).
 *
 * <p>A scan of rows (not a pre-aggregating one) keeps the delegate's request that planned it
 * (the table, the pushed predicate, the pruned columns): {@link ByTimeAggregates} asks the
 * delegate with it for an aggregation Spark could not push.
 */
class TsFileScan implements Scan {
  private final Scan batch;
  private final Scan stream;
  private final String description;
  private final ObjectNode request;

  TsFileScan(Scan batch, Scan stream, String description, ObjectNode request) {
    this.batch = batch;
    this.stream = stream;
    this.description = description;
    this.request = request;
  }

  /**
   * The {@code plan_scan} request of a scan of rows; null for a pre-aggregating scan or a
   * row-level operation's scan of whole parts.
   */
  ObjectNode request() {
    return request;
  }

  @Override
  public StructType readSchema() {
    return batch.readSchema();
  }

  @Override
  public String description() {
    return description;
  }

  @Override
  public Batch toBatch() {
    return batch.toBatch();
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    return stream.toMicroBatchStream(checkpointLocation);
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return batch.supportedCustomMetrics();
  }
}
