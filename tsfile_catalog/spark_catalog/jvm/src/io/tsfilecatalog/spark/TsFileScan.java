package io.tsfilecatalog.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;

/**
 * A planned scan of a catalog table: Spark's own Python-source scan, with the options of a
 * batch read (pinned to the version Spark loaded) or of a stream (from the version the
 * stream's options name, following new commits).
 */
class TsFileScan implements Scan {
  private final Scan batch;
  private final Scan stream;
  private final String description;

  TsFileScan(Scan batch, Scan stream, String description) {
    this.batch = batch;
    this.stream = stream;
    this.description = description;
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
