package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonScan;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Plans one scan of a catalog table: Spark pushes predicates and prunes columns, the delegate
 * says which predicates the scan evaluates exactly and which source options it gets, and the
 * scan is Spark's own over the registered {@code tsfile} Python source.
 *
 * <p>A new builder (and a new Python source instance) per query: nothing a query pushed is
 * reused by the next one on the same DataFrame.
 */
class TsFileScanBuilder
    implements SupportsPushDownV2Filters,
        SupportsPushDownRequiredColumns,
        SupportsPushDownAggregates {
  private final TsFileTable table;
  private final CaseInsensitiveStringMap options;
  private StructType required;
  private Predicate[] pushed = new Predicate[0];
  private String where;
  private JsonNode aggregated;

  TsFileScanBuilder(TsFileTable table, CaseInsensitiveStringMap options) {
    this.table = table;
    this.options = options;
    this.required = table.schema();
  }

  private ObjectNode request() {
    ObjectNode out = Client.object();
    out.set("scan", table.scanDescription());
    out.set("options", Client.map(options.asCaseSensitiveMap()));
    return out;
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    ObjectNode request = request();
    ArrayNode list = request.putArray("predicates");
    for (Predicate predicate : predicates) {
      list.add(Scans.toJson(predicate));
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    JsonNode reply = Client.call("push_predicates", request);
    List<Predicate> accepted = new ArrayList<>();
    List<Predicate> rest = new ArrayList<>();
    JsonNode exact = reply.get("pushed");
    for (int i = 0; i < predicates.length; i++) {
      boolean taken = false;
      for (JsonNode index : exact) {
        taken |= index.asInt() == i;
      }
      (taken ? accepted : rest).add(predicates[i]);
    }
    pushed = accepted.toArray(new Predicate[0]);
    where = reply.path("where").isNull() ? null : reply.path("where").asText(null);
    return rest.toArray(new Predicate[0]);
  }

  @Override
  public Predicate[] pushedPredicates() {
    return pushed;
  }

  /**
   * Spark offers an aggregation only when the scan took every filter; the delegate answers it
   * from statistics or declines (Spark then aggregates the scanned rows).
   */
  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    ObjectNode request = request();
    request.setAll(Aggregates.toJson(aggregation));
    if (where != null) {
      request.put("where", where);
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    JsonNode reply = Client.call("push_aggregation", request);
    if (reply == null || reply.isNull()) {
      return false;
    }
    aggregated = reply;
    return true;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    required = requiredSchema;
  }

  @Override
  public Scan build() {
    if (aggregated != null) {
      return Aggregates.localScan(
          (StructType) DataType.fromJson(aggregated.get("schema").asText()),
          aggregated.get("rows"),
          aggregated.path("description").asText("tsfile statistics"));
    }
    ObjectNode request = request();
    request.set("columns", Client.strings(required.fieldNames()));
    if (where != null) {
      request.put("where", where);
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    request.put("parallelism", SparkSession.active().sparkContext().defaultParallelism());
    JsonNode reply = Client.call("plan_scan", request);
    StructType readSchema = (StructType) DataType.fromJson(reply.get("schema").asText());
    return new TsFileScan(
        pythonScan(readSchema, reply.get("options")),
        pythonScan(readSchema, reply.get("stream_options")),
        reply.path("description").asText("(Python)"));
  }

  /** Spark's scan of the registered Python source, on a source instance of its own. */
  private static Scan pythonScan(StructType readSchema, JsonNode options) {
    PythonDataSourceV2 source = new PythonDataSourceV2();
    source.setShortName(Scans.SHORT_NAME);
    return new PythonScan(
        source,
        Scans.SHORT_NAME,
        readSchema,
        new CaseInsensitiveStringMap(Client.toMap(options)),
        new Filter[0]);
  }
}
