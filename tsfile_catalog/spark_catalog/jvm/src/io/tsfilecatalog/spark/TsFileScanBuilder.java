package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonScan;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Plans one scan of a catalog table: Spark pushes predicates, aggregates, a limit or a top-N
 * (ORDER BY ... LIMIT) and prunes columns, the delegate says which predicates the scan
 * evaluates exactly, whether statistics answer an aggregation (a local scan) or the scan
 * pre-aggregates it, and which source options the scan gets; the scan is Spark's own over the
 * registered {@code tsfile} Python source.
 *
 * <p>A new builder (and a new Python source instance) per query: nothing a query pushed is
 * reused by the next one on the same DataFrame.
 */
class TsFileScanBuilder
    implements SupportsPushDownV2Filters,
        SupportsPushDownRequiredColumns,
        SupportsPushDownAggregates,
        SupportsPushDownLimit,
        SupportsPushDownTopN {
  private final TsFileTable table;
  private final CaseInsensitiveStringMap options;
  private StructType required;
  private Predicate[] pushed = new Predicate[0];
  private String where;
  private Integer limit;
  /** A pushed top-N whose first sort key is {@code time}: {n, descending}. */
  private ObjectNode timeTop;
  /** The delegate's answer to the pushed aggregation: rows, or a pre-aggregating scan. */
  private JsonNode aggregated;
  /** Statistics answers by the aggregation's JSON, from {@link #supportCompletePushDown}. */
  private final Map<String, JsonNode> complete = new HashMap<>();
  /** Every aggregation Spark offered, in order (the first is the query's own). */
  private final ArrayNode offered = Client.JSON.createArrayNode();

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

  private ObjectNode aggregationRequest(ObjectNode aggregation, String mode) {
    ObjectNode request = request();
    request.setAll(aggregation);
    request.put("mode", mode);
    request.set("offered", offered);
    if (where != null) {
      request.put("where", where);
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    return request;
  }

  /**
   * Complete when statistics answer the aggregation with one row per group: Spark then keeps
   * no aggregate of its own (and does not split {@code avg} into {@code sum}/{@code count}).
   * Spark offers an aggregation only when the scan took every filter.
   */
  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    ObjectNode json = Aggregates.toJson(aggregation);
    String key = json.toString();
    if (!complete.containsKey(key)) {
      offered.add(json);
      JsonNode reply = Client.call("push_aggregation", aggregationRequest(json, "complete"));
      complete.put(key, reply == null || reply.isNull() ? null : reply);
    }
    return complete.get(key) != null;
  }

  /**
   * The statistics answer when there is one, else a scan that pre-aggregates per group (Spark
   * merges its partial rows), else false: Spark aggregates the scanned rows.
   */
  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    ObjectNode json = Aggregates.toJson(aggregation);
    JsonNode answer = complete.get(json.toString());
    if (answer == null) {
      ObjectNode request = aggregationRequest(json, "partial");
      request.put("parallelism", SparkSession.active().sparkContext().defaultParallelism());
      answer = Client.call("push_aggregation", request);
    }
    if (answer == null || answer.isNull()) {
      return false;
    }
    aggregated = answer;
    return true;
  }

  /** Spark pushes a limit only over a scan it keeps no filter on; it still applies it too. */
  @Override
  public boolean pushLimit(int n) {
    limit = n;
    return true;
  }

  /**
   * A top-N ordered first by {@code time}: the scan reads only the parts that may hold its
   * first rows and hands Spark at most about n rows per partition. Partial: Spark still sorts
   * and limits, so further sort keys and ties need nothing of the scan. Spark offers it only
   * when the scan took every filter.
   */
  @Override
  public boolean pushTopN(SortOrder[] orders, int n) {
    if (orders.length == 0 || n < 1 || !(orders[0].expression() instanceof NamedReference)) {
      return false;
    }
    String[] names = ((NamedReference) orders[0].expression()).fieldNames();
    if (names.length != 1 || !names[0].equalsIgnoreCase("time")) {
      return false;
    }
    timeTop = Client.object();
    timeTop.put("n", n);
    timeTop.put("descending", orders[0].direction() == SortDirection.DESCENDING);
    return true;
  }

  @Override
  public boolean isPartiallyPushed() {
    return true;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    required = requiredSchema;
  }

  @Override
  public Scan build() {
    if (aggregated != null && aggregated.has("rows")) {
      return Aggregates.localScan(
          (StructType) DataType.fromJson(aggregated.get("schema").asText()),
          aggregated.get("rows"),
          aggregated.path("description").asText("tsfile statistics"));
    }
    if (aggregated != null) {
      return scan(aggregated, null);
    }
    ObjectNode request = request();
    request.set("columns", Client.strings(required.fieldNames()));
    if (where != null) {
      request.put("where", where);
    }
    if (limit != null) {
      request.put("limit", limit);
    }
    if (timeTop != null) {
      request.set("time_top", timeTop);
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    request.put("parallelism", SparkSession.active().sparkContext().defaultParallelism());
    return scan(Client.call("plan_scan", request), request);
  }

  /**
   * The scan the delegate planned (from {@code request}, null where no optimizer rule may
   * answer it from statistics): its read schema and source options.
   */
  static Scan scan(JsonNode plan, ObjectNode request) {
    StructType readSchema = (StructType) DataType.fromJson(plan.get("schema").asText());
    return new TsFileScan(
        pythonScan(readSchema, plan.get("options")),
        pythonScan(readSchema, plan.get("stream_options")),
        plan.path("description").asText("(Python)"),
        request);
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
