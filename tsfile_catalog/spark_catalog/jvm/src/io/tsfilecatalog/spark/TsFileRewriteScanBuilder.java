package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The scan of a copy-on-write {@link TsFileRowLevelOperation}: whole parts. The statement's
 * predicates only choose which parts are read (Spark does not apply them to a group-based
 * scan's rows again, and rewrites every row it gets back), so every row of every part read is
 * returned; the delegate adds, for a {@code key.duplicates = last} table, every part sharing a
 * key with one read, and reads them merged. Spark may narrow the parts further at run time
 * ({@link TsFileRewriteScan}).
 */
class TsFileRewriteScanBuilder implements SupportsPushDownV2Filters {
  private final TsFileTable table;
  private final CaseInsensitiveStringMap options;
  private final TsFileRowLevelOperation operation;
  private Predicate[] pushed = new Predicate[0];

  TsFileRewriteScanBuilder(
      TsFileTable table, CaseInsensitiveStringMap options, TsFileRowLevelOperation operation) {
    this.table = table;
    this.options = options;
    this.operation = operation;
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    pushed = predicates;
    // Spark keeps evaluating the statement's condition itself: nothing is taken from it.
    return predicates;
  }

  @Override
  public Predicate[] pushedPredicates() {
    return new Predicate[0];
  }

  @Override
  public Scan build() {
    ObjectNode request = Client.object();
    request.set("scan", table.scanDescription());
    request.set("options", Client.map(options.asCaseSensitiveMap()));
    request.put("command", operation.command().name());
    ArrayNode list = request.putArray("predicates");
    for (Predicate predicate : pushed) {
      list.add(Scans.toJson(predicate));
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    request.put("parallelism", SparkSession.active().sparkContext().defaultParallelism());
    JsonNode plan = Client.call("plan_rewrite_scan", request);
    operation.planned(plan.get("rewrite"));
    return new TsFileRewriteScan(request, plan, operation);
  }
}
