package io.tsfilecatalog.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.Write;

/**
 * A write that wraps Spark's Python-source write and describes itself, and reports its metrics,
 * as that write does; subclasses change how it runs ({@link RowFedWrite}) or what Spark must
 * do to its rows first ({@link ClusteredWrite}).
 */
abstract class ForwardingWrite implements Write {
  /** The wrapped write, as Spark plans it. */
  protected final Write described;

  ForwardingWrite(Write described) {
    this.described = described;
  }

  @Override
  public String description() {
    return described.description();
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return described.supportedCustomMetrics();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return described.reportDriverMetrics();
  }
}
