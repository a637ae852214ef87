package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsDeleteV2;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * One version of a catalog table, as the delegate resolved it when Spark loaded it: its schema,
 * its properties, and the opaque {@code scan} description the delegate plans reads from.
 * Reads and writes run through the registered {@code tsfile} Python data source. {@code DELETE
 * FROM} whose condition the scan evaluates exactly runs the delegate's delete once, when Spark
 * executes it; {@code UPDATE}, {@code MERGE INTO} and any other {@code DELETE} are Spark's
 * copy-on-write of the parts they touch ({@link TsFileRowLevelOperation}), but a {@code
 * key.duplicates = last} table's UPDATE, which appends the updated rows ({@link
 * TsFileDeltaOperation}).
 */
public class TsFileTable
    implements SupportsRead, SupportsWrite, SupportsDeleteV2, SupportsRowLevelOperations {
  private final ObjectNode catalog;
  private final Identifier ident;
  private final JsonNode description;
  private final StructType schema;
  private boolean pendingMerge;
  // A write's own target (MergeSchemaWrites): it evolves its schema with its rows, so Spark's
  // ResolveSchemaEvolution must not alter the table first (a commit of its own).
  private boolean mergingWrite;
  // The target of a MERGE whose every clause inserts (RowCounts.MarkInserts), which Spark
  // writes as an append: its write is committed as the MERGE, with its counts.
  private boolean insertingMerge;
  /** The result row of the delegate's DELETE, once {@link #deleteWhere} ran it. */
  private volatile JsonNode deleted;

  /** {@code catalog} is the catalog's {@code {name, options}}, which the delegate needs back. */
  TsFileTable(ObjectNode catalog, Identifier ident, JsonNode description) {
    this.catalog = catalog;
    this.ident = ident;
    this.description = description;
    this.schema = (StructType) DataType.fromJson(description.get("schema").asText());
  }

  @Override
  public String name() {
    List<String> parts = new ArrayList<>();
    parts.add(catalog.get("name").asText());
    parts.addAll(Arrays.asList(ident.namespace()));
    parts.add(ident.name());
    return String.join(".", parts);
  }

  /** Refuses a write into a table that is only read (a URL reference's), with its message. */
  private void refuseReadOnly() {
    JsonNode refusal = description.get("read_only");
    if (refusal != null && !refusal.isNull()) {
      throw new UnsupportedOperationException(refusal.asText());
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return Client.toMap(description.get("properties"));
  }

  @Override
  public Set<TableCapability> capabilities() {
    if (pendingMerge || mergingWrite) {
      Set<TableCapability> target = EnumSet.copyOf(CAPABILITIES);
      target.removeIf(c -> c.name().equals("AUTOMATIC_SCHEMA_EVOLUTION"));
      if (pendingMerge) {
        target.add(TableCapability.ACCEPT_ANY_SCHEMA);
      }
      return target;
    }
    return CAPABILITIES;
  }

  private static final Set<TableCapability> CAPABILITIES = capabilitiesOfThisSpark();

  private static Set<TableCapability> capabilitiesOfThisSpark() {
    Set<TableCapability> out =
        EnumSet.of(
            TableCapability.BATCH_READ,
            TableCapability.BATCH_WRITE,
            TableCapability.TRUNCATE,
            TableCapability.OVERWRITE_BY_FILTER,
            // Declared so that overwritePartitions() reaches the write builder's refusal, which
            // says what to use instead (Spark's own message names neither).
            TableCapability.OVERWRITE_DYNAMIC,
            TableCapability.MICRO_BATCH_READ,
            TableCapability.STREAMING_WRITE);
    // INSERT and MERGE WITH SCHEMA EVOLUTION, withSchemaEvolution() writes: Spark adds the
    // source's new columns through alterTable (the catalog's ADD COLUMNS) before it writes,
    // unless the extensions make the write one commit (MergeSchemaWrites). By name, since a Spark
    // without the capability must still load the class.
    try {
      out.add(TableCapability.valueOf("AUTOMATIC_SCHEMA_EVOLUTION"));
    } catch (IllegalArgumentException notInThisSpark) {
      // an older Spark: such writes are refused by Spark itself
    }
    return Collections.unmodifiableSet(out);
  }

  /**
   * This version as a mergeSchema append's target until its query is resolved ({@link
   * MergeSchemaWrites}): it accepts any columns, so Spark's output check waits.
   */
  TsFileTable pendingMerge() {
    TsFileTable pending = new TsFileTable(catalog, ident, description);
    pending.pendingMerge = true;
    return pending;
  }

  boolean isPendingMerge() {
    return pendingMerge;
  }

  boolean isMergingWrite() {
    return mergingWrite;
  }

  /**
   * This version as the target of a MERGE that only inserts ({@link RowCounts.MarkInserts}),
   * its writes given {@code options} (the delegate's {@code plan_inserts}).
   */
  TsFileTable insertingMerge(JsonNode options) {
    ObjectNode changed = (ObjectNode) description.deepCopy();
    JsonNode given = changed.get("write_options");
    ObjectNode writeOptions =
        given instanceof ObjectNode ? (ObjectNode) given : changed.putObject("write_options");
    writeOptions.setAll((ObjectNode) options);
    TsFileTable target = new TsFileTable(catalog, ident, changed);
    target.insertingMerge = true;
    return target;
  }

  boolean isInsertingMerge() {
    return insertingMerge;
  }

  /**
   * This version as the target of an UPDATE, DELETE or MERGE whose history records {@code
   * parameters} (the delegate's, {@link HistoryParameters}): its writes' option {@code
   * rewriteParameters}, and its metadata delete's.
   */
  TsFileTable recording(JsonNode parameters) {
    ObjectNode changed = (ObjectNode) description.deepCopy();
    JsonNode given = changed.get("write_options");
    ObjectNode writeOptions =
        given instanceof ObjectNode ? (ObjectNode) given : changed.putObject("write_options");
    writeOptions.put(RECORDED, parameters.toString());
    return new TsFileTable(catalog, ident, changed);
  }

  boolean isRecording() {
    return writeOptions().containsKey(RECORDED);
  }

  private static final String RECORDED = "rewriteParameters";

  /** This version shown with the schema {@code json} (DESCRIBE's: its TAG columns marked). */
  TsFileTable withSchema(String json) {
    ObjectNode changed = (ObjectNode) description.deepCopy();
    changed.put("schema", json);
    return new TsFileTable(catalog, ident, changed);
  }

  /**
   * This version as the target of a mergeSchema append (or an {@code INSERT WITH SCHEMA
   * EVOLUTION}, which becomes one): with the schema {@code json} the append leaves (as it is:
   * null), its writes merging their schema in the same commit as their rows.
   */
  TsFileTable mergingWrite(String json) {
    ObjectNode changed = (ObjectNode) description.deepCopy();
    if (json != null) {
      changed.put("schema", json);
    }
    JsonNode options = changed.get("write_options");
    ObjectNode writeOptions = options instanceof ObjectNode ? (ObjectNode) options : changed.putObject("write_options");
    writeOptions.put("mergeSchema", "true");
    TsFileTable target = new TsFileTable(catalog, ident, changed);
    target.mergingWrite = true;
    return target;
  }

  /**
   * {@link #mergingWrite} whose scans read this version as the write leaves it ({@code
   * readSchema}, the delegate's, opaque here): a {@code MERGE WITH SCHEMA EVOLUTION}'s
   * copy-on-write reads the rows it rewrites under the new schema.
   */
  TsFileTable mergingWrite(String json, String readSchema) {
    TsFileTable target = mergingWrite(json);
    ObjectNode options = (ObjectNode) target.description.get("scan").get("options");
    options.put("mergedSchema", readSchema);
    return target;
  }

  /** What the delegate needs back to plan a scan of this version (opaque here). */
  JsonNode scanDescription() {
    return description.get("scan");
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new TsFileScanBuilder(this, options);
  }

  /**
   * Whether every conjunct binds exactly, checked when Spark plans the DELETE: then the
   * delegate's delete runs (parts wholly matching dropped in metadata); else Spark rewrites the
   * parts holding matching rows ({@link #newRowLevelOperationBuilder}).
   */
  @Override
  public boolean canDeleteWhere(Predicate[] predicates) {
    refuseReadOnly();
    return Client.call("can_delete_where", deleteRequest(predicates)).asBoolean();
  }

  @Override
  public void deleteWhere(Predicate[] predicates) {
    deleted = Client.call("delete_where", deleteRequest(predicates));
  }

  /** The result row of the delegate's last {@link #deleteWhere} ({@link RowCounts}). */
  JsonNode deleted() {
    return deleted;
  }

  private ObjectNode deleteRequest(Predicate[] predicates) {
    ObjectNode request = Client.object();
    request.set("catalog", catalog);
    request.set("namespace", Client.strings(ident.namespace()));
    request.put("name", ident.name());
    request.set("scan", scanDescription());
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    request.put("parameters", writeOptions().get(RECORDED)); // null: none recorded
    ArrayNode trees = request.putArray("predicates");
    ArrayNode texts = request.putArray("texts");
    for (Predicate predicate : predicates) {
      trees.add(Scans.toJson(predicate));
      texts.add(predicate.toString());
    }
    return request;
  }

  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    refuseReadOnly();
    ObjectNode request = Client.object();
    request.set("scan", scanDescription());
    request.put("command", info.command().name());
    // A delta (the changed rows only) where the delegate plans one, else copy-on-write.
    JsonNode delta = Client.call("plan_delta", request);
    if (delta != null && !delta.isNull()) {
      return () -> new TsFileDeltaOperation(this, info.command(), delta);
    }
    return () -> new TsFileRowLevelOperation(this, info.command());
  }

  /** The options of a write into this table (opaque here). */
  Map<String, String> writeOptions() {
    return Client.toMap(description.get("write_options"));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    refuseReadOnly();
    Map<String, String> options = Client.toMap(description.get("write_options"));
    TsFileWriteBuilder builder = new TsFileWriteBuilder(schema, options, info, scanDescription());
    if (!insertingMerge) {
      return builder;
    }
    // The MERGE's append: its commit message carries Spark's id of the write, by which the
    // statement's result finds the commit and its counts (RowCounts).
    return new WriteBuilder() {
      @Override
      public Write build() {
        Write planned = builder.build();
        return new RowFedWrite(planned, () -> planned, "MERGE", info.queryId(), options);
      }
    };
  }
}
